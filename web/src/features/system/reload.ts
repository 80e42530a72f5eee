/** Loads the page anew from the server (the new version's UI after a self-update). A
 * method of an object, so that tests replace it with `vi.spyOn(page, "reload")`. */
export const page = {
  reload(): void {
    window.location.reload();
  },
};
