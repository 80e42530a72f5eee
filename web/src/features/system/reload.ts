/** Loads the page anew from the server (the new version's UI after a self-update). Tests replace it. */
export function reloadPage(): void {
  window.location.reload();
}
