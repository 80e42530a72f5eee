// A real OpenID Connect provider (oidc-provider 9) on loopback for the test suite; started
// and configured by tests/support/oidc_provider.py.
//
//   node provider.mjs CONFIG.json
//
// CONFIG: {"port", "issuer", "clients": [...], "accounts_file", "jwks_file"}. The accounts
// file is read again at every account lookup (a test changes a user's groups between two
// sign-ins); the signing keys are read once (a key rotation restarts the process).
// Stdout carries one line, `ready`, once the server listens; everything else goes to stderr.
import { readFileSync } from 'node:fs';

import Provider, { interactionPolicy } from 'oidc-provider';

// oidc-provider prints its notices with console.info, to stdout: keep stdout for `ready`.
console.info = console.error;
console.log = console.error;

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const readAccounts = () => JSON.parse(readFileSync(config.accounts_file, 'utf8'));

async function findAccount(ctx, id) {
  const profile = readAccounts()[id];
  if (profile === undefined) return undefined; // unknown: see the `unknown_account` check
  return { accountId: id, claims: async () => ({ ...profile, sub: id }) };
}

// The dev login form takes any login. A login naming no account would end in an error page
// (no account, no grant), so the login prompt asks again instead, as a real one would.
const policy = interactionPolicy.base();
policy.get('login').checks.add(new interactionPolicy.Check(
  'unknown_account',
  'the account is unknown',
  (ctx) => Boolean(ctx.oidc.session.accountId && !ctx.oidc.account),
));

// No consent page: every known user has granted the client whatever it asks for.
async function loadExistingGrant(ctx) {
  const grant = new ctx.oidc.provider.Grant({
    clientId: ctx.oidc.client.clientId,
    accountId: ctx.oidc.session.accountId,
  });
  grant.addOIDCScope([...ctx.oidc.requestParamOIDCScopes].join(' '));
  grant.addOIDCClaims([...ctx.oidc.requestParamClaims]);
  await grant.save();
  return grant;
}

const provider = new Provider(config.issuer, {
  clients: config.clients.map((client) => ({
    token_endpoint_auth_method: 'client_secret_basic',
    ...client,
    grant_types: ['authorization_code'],
    response_types: ['code'],
  })),
  clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
  jwks: JSON.parse(readFileSync(config.jwks_file, 'utf8')),
  // Fixed keys: the session cookies a browser holds stay valid across restarts (the
  // sessions themselves live in memory, so a restart still signs everyone out).
  cookies: { keys: ['stackyard-test-oidc-cookie-key'] },
  scopes: ['openid'],
  claims: {
    openid: ['sub'],
    profile: ['name', 'preferred_username'],
    email: ['email', 'email_verified'],
    groups: ['groups'],
  },
  features: {
    devInteractions: { enabled: true },
    rpInitiatedLogout: { enabled: true },
  },
  pkce: { required: () => true }, // for confidential clients too (the default: public only)
  findAccount,
  loadExistingGrant,
  interactions: { policy },
});

// Failures a test should be able to read in the process's stderr.
for (const event of ['server_error', 'authorization.error', 'grant.error', 'userinfo.error',
  'end_session.error']) {
  provider.on(event, (ctx, error) => {
    console.error(`${event}: ${error.message}${error.error_description ? ` (${error.error_description})` : ''}`);
  });
}

const server = provider.listen(config.port, '127.0.0.1', () => {
  process.stdout.write('ready\n');
});

process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections(); // keep-alive connections would hold close() open
});
