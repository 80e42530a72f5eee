"""Signing in as a user does, in Chromium: through a real OpenID Connect provider's own
pages (oidc-provider on loopback) and back, refused when no group maps to a role, signed
out there too; and two-factor sign-in set up and used from the account page."""

from __future__ import annotations

import time

import httpx
import pyotp
import pytest
from playwright.sync_api import expect

from tests.support.browser import open_page, sign_in, submit_sign_in
from tests.support.oidc_provider import OidcProvider, use_provider
from tests.support.service import (
    ADMIN_PASSWORD,
    USER_PASSWORD,
    ServerProcess,
)
from tests.support.service import sign_in as api_sign_in

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def service(relying_party: ServerProcess) -> ServerProcess:
    return relying_party


@pytest.fixture(scope="module")
def provider(registered_provider: OidcProvider, service: ServerProcess) -> OidcProvider:
    """The provider, set up as the service's way in (groups to roles)."""
    with httpx.Client(base_url=service.url) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        use_provider(admin, registered_provider)
    return registered_provider


def through_provider(page, start: str, provider: OidcProvider, account: str) -> None:
    """From page `start` of the service: "Sign in with Keycloak", then the provider's own
    sign-in page (its login form) as `account`."""
    page.goto(start)
    page.get_by_role("button", name="Sign in with Keycloak").click()
    page.wait_for_url(f"{provider.issuer}/**")
    page.get_by_placeholder("Enter any login").fill(account)
    page.get_by_placeholder("and password").fill("anything")
    page.get_by_role("button", name="Sign-in").click()


def test_a_user_signs_in_at_the_provider_with_the_role_of_their_group(page, service, provider):
    provider.set_account("otto", groups=["ops"])
    through_provider(page, f"{service.url}/stacks", provider, "otto")
    page.wait_for_url(f"{service.url}/stacks")
    page.get_by_role("heading", level=1, name="Stacks").wait_for()
    expect(page.get_by_title("Signed in as otto (operator)")).to_be_visible()
    # An operator: no admin sections in Settings; an account of the provider has no
    # password or two-factor here.
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Settings").click()
    expect(page.get_by_text("You sign in through your identity provider")).to_be_visible()
    expect(page.get_by_role("heading", name="Users")).to_have_count(0)
    expect(page.get_by_role("heading", name="Identity provider")).to_have_count(0)


def test_a_user_in_no_mapped_group_comes_back_refused(page, service, provider):
    provider.set_account("nina", groups=["interns"])
    through_provider(page, f"{service.url}/login", provider, "nina")
    page.wait_for_url(f"{service.url}/login?error=**")
    expect(page.get_by_role("alert")).to_contain_text("in no group that has a role here")
    page.goto(f"{service.url}/stacks")
    page.wait_for_url(f"{service.url}/login")  # still nobody signed in


def test_sign_out_goes_through_the_providers_sign_out_and_back(page, service, provider):
    provider.set_account("sam", groups=["stackyard-admins"])
    through_provider(page, f"{service.url}/login", provider, "sam")
    page.get_by_role("heading", level=1, name="Dashboard").wait_for()
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("button", name="Yes, sign me out").click()
    page.wait_for_url(f"{service.url}/login**")
    page.get_by_role("button", name="Sign in with Keycloak").wait_for()
    # Signed out at the provider too: it asks who is signing in again.
    page.get_by_role("button", name="Sign in with Keycloak").click()
    expect(page.get_by_placeholder("Enter any login")).to_be_visible()


def make_user(service: ServerProcess, username: str, role: str, **change) -> None:
    """A local account (password USER_PASSWORD), changed as an admin would (`change`)."""
    with httpx.Client(base_url=service.url) as admin:
        api_sign_in(admin, "admin", ADMIN_PASSWORD)
        made = admin.post(
            "/api/users", json={"username": username, "password": USER_PASSWORD, "role": role}
        )
        assert made.status_code == 201, made.text
        if change:
            changed = admin.patch(f"/api/users/{username}", json=change)
            assert changed.status_code == 200, changed.text


def set_up_two_factor(page) -> tuple[pyotp.TOTP, list[str], str]:
    """On the Settings page: the account's two-factor set-up, as a user with an
    authenticator app does it. Returns the app, the recovery codes shown and the code
    that turned it on."""
    section = page.get_by_role("region", name="Two-factor sign-in")
    section.get_by_label("Your password").fill(USER_PASSWORD)
    section.get_by_role("button", name="Set up").click()
    qr = section.get_by_role("img", name="QR code to scan with your authenticator app")
    expect(qr).to_be_visible()
    # Drawn, not a broken image: an SVG without its namespace decodes to nothing.
    drawn = qr.evaluate("img => img.decode().then(() => img.naturalWidth, () => 0)")
    assert drawn > 0
    authenticator = pyotp.TOTP(section.get_by_test_id("totp-secret").inner_text())
    typed = authenticator.now()
    section.get_by_label("Code from the app").fill(typed)
    section.get_by_role("button", name="Turn on").click()
    codes = section.get_by_role("region", name="Recovery codes")
    expect(codes).to_contain_text("-")
    recovery = codes.locator("pre").inner_text().split()
    assert len(recovery) == 10
    codes.get_by_role("button", name="I have saved them").click()
    expect(section).to_contain_text("10 recovery codes left")
    expect(codes).to_have_count(0)  # shown once
    return authenticator, recovery, typed


def test_two_factor_is_set_up_from_the_account_page_and_asked_at_sign_in(page, service, provider):
    make_user(service, "tess", "admin")
    sign_in(page, service.url, "tess", USER_PASSWORD)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Settings").click()
    authenticator, _, typed = set_up_two_factor(page)

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(f"{service.url}/login")
    submit_sign_in(page, "tess", USER_PASSWORD)
    code = page.get_by_label("Code from your authenticator app (or a recovery code)")
    expect(code).to_be_visible()
    expect(page).to_have_url(f"{service.url}/login")  # not signed in yet
    code.fill("000000")
    page.get_by_role("button", name="Verify").click()
    expect(page.get_by_role("alert")).to_contain_text("Invalid username, password or code")
    # The enrolment's code was used (a code counts once): said so, not as a wrong
    # password; the app's next one signs in.
    code.fill(typed)
    page.get_by_role("button", name="Verify").click()
    expect(page.get_by_role("alert")).to_contain_text("That code was already used")
    code.fill(authenticator.at(time.time() + 30))
    page.get_by_role("button", name="Verify").click()
    page.get_by_role("heading", level=1, name="Dashboard").wait_for()
    expect(page.get_by_title("Signed in as tess (admin)")).to_be_visible()


def test_a_recovery_code_signs_in_once(page, browser, service, provider):
    make_user(service, "rosa", "viewer")
    sign_in(page, service.url, "rosa", USER_PASSWORD)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Settings").click()
    _, recovery, _ = set_up_two_factor(page)
    for attempt in ("first", "again"):
        other = open_page(browser)
        try:
            other.goto(service.url + "/login")
            submit_sign_in(other, "rosa", USER_PASSWORD)
            other.get_by_label("Code from your authenticator app (or a recovery code)").fill(
                recovery[0]
            )
            other.get_by_role("button", name="Verify").click()
            if attempt == "first":
                other.get_by_role("heading", level=1, name="Dashboard").wait_for()
            else:
                expect(other.get_by_role("alert")).to_contain_text(
                    "Invalid username, password or code"
                )
        finally:
            other.context.close()
    page.reload()
    expect(page.get_by_role("region", name="Two-factor sign-in")).to_contain_text(
        "9 recovery codes left"
    )


def test_two_factor_required_by_an_admin_is_set_up_before_anything_else(page, service, provider):
    make_user(service, "vera", "operator", two_factor_required=True)
    page.goto(f"{service.url}/stacks")
    page.wait_for_url(f"{service.url}/login")  # (sent there: the form typed into is its)
    submit_sign_in(page, "vera", USER_PASSWORD)
    # Sent to the account's set-up instead of a page of refusals.
    page.wait_for_url(f"{service.url}/settings")
    expect(
        page.get_by_text("An admin requires two-factor sign-in for your account")
    ).to_be_visible()
    expect(page.get_by_role("heading", name="API tokens")).to_have_count(0)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Stacks").click()
    page.wait_for_url(f"{service.url}/settings")

    set_up_two_factor(page)
    expect(page.get_by_text("An admin requires two-factor sign-in for your account")).to_have_count(
        0
    )
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Stacks").click()
    page.get_by_role("heading", level=1, name="Stacks").wait_for()
    expect(page.get_by_role("alert")).to_have_count(0)


def test_the_admin_sees_the_addresses_to_register(page, service, provider):
    sign_in(page, service.url)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Settings").click()
    section = page.get_by_role("region", name="Identity provider")
    expect(
        section.get_by_text("Register these at your provider as the redirect URI")
    ).to_be_visible()
    expect(section.get_by_text(f"{service.url}/api/auth/oidc/callback")).to_be_visible()
    expect(section.get_by_text(f"{service.url}/login", exact=True)).to_be_visible()
    expect(section.get_by_label("Issuer")).to_have_value(provider.issuer)
    expect(
        section.get_by_text("Client secret (saved; type a new one to replace it)")
    ).to_be_visible()
