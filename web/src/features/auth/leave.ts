/** Leaving the app for another page (the identity provider's sign-in or sign-out): a full
 * navigation, not a route of this app. An object, so that tests can watch it (`vi.spyOn`). */
export const away = {
  leaveFor(url: string): void {
    window.location.assign(url);
  },
};
