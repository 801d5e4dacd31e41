// A real OAuth 2.1 / OpenID Connect authorization server for the MCP OAuth tests: npm's
// `oidc-provider` (a certified OpenID Connect implementation) on loopback, started by
// .ci/oidc-provider.sh.
//
//   node .ci/oidc-provider.mjs PORT
//
// - Dynamic client registration is open (MCP clients register themselves).
// - Resource indicators (RFC 8707): an access token is a JWT (RFC 9068) for the resource the
//   client names, with the scopes `mcp:tools` and `mcp:admin` available; its lifetime is
//   HPD_OIDC_ACCESS_TOKEN_TTL seconds (default 10, short so that tests see a refresh and an
//   expiry). Refresh tokens are issued to every client allowed the refresh_token grant.
// - PKCE is required.
// - There is one user, `alice`, who is signed in and consents at once: the interaction
//   endpoint finishes every login and consent prompt without a form, so a test's "browser"
//   only follows redirects (keeping cookies).
import { generateKeyPair, exportJWK } from 'jose';
import Provider from 'oidc-provider';

const port = Number(process.argv[2] || 0);
const issuer = `http://127.0.0.1:${port}`;
const ttl = Number(process.env.HPD_OIDC_ACCESS_TOKEN_TTL || 10);

const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const signing = { ...(await exportJWK(privateKey)), kid: 'hpd-oidc-es256', alg: 'ES256', use: 'sig' };

const provider = new Provider(issuer, {
  jwks: { keys: [signing] },
  cookies: { keys: [crypto.randomUUID()] },
  // The one signing key is ES256; registered clients get ID tokens signed with it.
  clientDefaults: { id_token_signed_response_alg: 'ES256', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
  scopes: ['openid', 'offline_access', 'mcp:tools', 'mcp:admin'],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator) => ({
        scope: 'mcp:tools mcp:admin',
        audience: resourceIndicator,
        accessTokenTTL: ttl,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
});

// The interaction endpoint: alice signs in, and consents to whatever is asked.
provider.use(async (ctx, next) => {
  if (!ctx.path.startsWith('/interaction/')) return next();
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const { prompt, params, session } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: 'alice' } };
  } else {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes || {})) {
      grant.addResourceScope(resource, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  }
  ctx.respond = false;
  await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
});

const server = provider.listen(port, '127.0.0.1', () => {
  console.log(`${issuer} ready`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
