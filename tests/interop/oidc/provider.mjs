// An OpenID Certified authorization server (npm `oidc-provider`) for the OAuth tests
// (tests/tests/it/oauth.rs): it issues access tokens for the Trails resource through a resource
// indicator (RFC 8707), as JWTs (RFC 9068) or, to client `opaque`, as opaque tokens to introspect.
//
//   node provider.mjs PORT KEYS.json
//
// KEYS.json: [{"kid": "...", "pem": "-----BEGIN PRIVATE KEY-----..."}], P-256 keys; the first
// signs. Prints "listening" once it serves at http://127.0.0.1:PORT (the issuer).
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const [port, keysFile] = process.argv.slice(2);
const keys = JSON.parse(readFileSync(keysFile, 'utf8')).map(({ kid, pem }) => ({
  ...createPrivateKey(pem).export({ format: 'jwk' }),
  kid,
  alg: 'ES256',
  use: 'sig',
}));
const ttl = Number(process.env.TOKEN_TTL || 300);
const client = (id, scope) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  // Its keys are P-256 only (the default would ask for RS256).
  id_token_signed_response_alg: 'ES256',
  scope,
});

const provider = new Provider(`http://127.0.0.1:${port}`, {
  jwks: { keys },
  clients: [
    client('builder', 'mcp:runtime mcp:builder'),
    client('reader', 'mcp:runtime'),
    client('opaque', 'mcp:runtime mcp:builder'),
    // The resource server itself, for introspection.
    client('trails', 'openid'),
  ],
  scopes: ['openid', 'mcp:runtime', 'mcp:builder', 'mcp:dev'],
  ttl: { ClientCredentials: () => ttl },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // Any resource asked for gets a token for it (the tests ask for another one on purpose);
      // a client must name one.
      getResourceServerInfo: (_ctx, indicator, asking) => ({
        scope: 'mcp:runtime mcp:builder mcp:dev',
        audience: indicator,
        accessTokenTTL: ttl,
        accessTokenFormat: asking.clientId === 'opaque' ? 'opaque' : 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
});
provider.proxy = false;
// How often the key set was fetched (GET /jwks-fetches), so a test can tell that a flood of
// made-up key ids does not make the resource server hammer the issuer.
let jwksFetches = 0;
provider.use(async (ctx, next) => {
  if (ctx.path === '/jwks') jwksFetches += 1;
  if (ctx.path === '/jwks-fetches') {
    ctx.body = { count: jwksFetches };
    return;
  }
  await next();
});
provider.on('server_error', (_ctx, error) => console.error('server_error', error));
provider.listen(Number(port), '127.0.0.1', () => console.log('listening'));
