// A real OpenID provider for Axon's identity-provider tests and the worked
// example in examples/idp/: `oidc-provider` (npm, pinned in peers/package.json),
// configured as a company's IdP would be for `axon serve`.
//
//   node peers/idp/provider.mjs --port 9400 --keys /tmp/idp-keys.json [--resource http://127.0.0.1:7878]
//
// `--port 0` picks a free port (the issuer URL is printed). `--resource` is
// the Axon a person signs in to (the dashboard client's redirect, and the
// default resource of a request that names none).
//
// - Client credentials for agents: client `axon-agent` (secret `agent-secret`)
//   may ask for `axon:tools axon:browser axon:admin`; client `axon-reader` only
//   for `axon:tools`. Access tokens are JWTs for the resource asked for (RFC
//   8707 `resource`, audience = that URL), signed with the provider's keys.
// - Authorization code + PKCE for people: public client `axon-dashboard`
//   (redirect `<resource>/auth/callback`), dynamic registration for MCP
//   clients that register themselves; any user name signs in (the provider's
//   development login page), then consents to the scopes asked for.
// - The signing keys live in the --keys file (created when missing: RS256,
//   ES256 and EdDSA; the first signs). A test rotates them by starting the
//   provider again on a new file.
// - Test only: `POST /test/mint` signs any claims with any header the test
//   asks for (`{"claims": {...}, "alg": "ES256", "kid": "...", "key": "rsa|ec|okp|none|hs-public"}`)
//   so that the tests can present expired, mis-addressed and forged tokens
//   with the provider's own keys; `POST /test/rotate` replaces the signing
//   keys with new ones (same issuer), as an IdP rotating its keys does;
//   `POST /test/resource {"resource": URL}` sets the Axon the dashboard
//   client redirects to (its port is known only once it runs).
//   Never part of a real IdP.
//
// Prints `listening <issuer>` once it answers.

import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import * as jose from 'jose';
import Provider from 'oidc-provider';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) => {
    if (arg.startsWith('--')) pairs.push([arg.slice(2), all[i + 1]]);
    return pairs;
  }, []),
);
const keysFile = args.keys ?? 'idp-keys.json';
let resource = args.resource ?? 'http://127.0.0.1:7878';

async function newKeys() {
  const keys = [];
  for (const [alg, options] of [['RS256', { modulusLength: 2048 }], ['ES256', {}], ['EdDSA', { crv: 'Ed25519' }]]) {
    const { privateKey } = await jose.generateKeyPair(alg, { extractable: true, ...options });
    const jwk = await jose.exportJWK(privateKey);
    jwk.alg = alg;
    jwk.use = 'sig';
    jwk.kid = `${alg.toLowerCase()}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    keys.push(jwk);
  }
  return { keys };
}

async function privateKeys() {
  if (existsSync(keysFile)) return JSON.parse(readFileSync(keysFile, 'utf8'));
  const jwks = await newKeys();
  writeFileSync(keysFile, JSON.stringify(jwks, null, 2));
  return jwks;
}

const scopes = ['axon:tools', 'axon:browser', 'axon:admin'];

function makeProvider(issuer, jwks) {
  const provider = new Provider(issuer, {
  jwks,
  clients: [
    {
      client_id: 'axon-agent',
      client_secret: 'agent-secret',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: scopes.join(' '),
    },
    {
      client_id: 'axon-reader',
      client_secret: 'reader-secret',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: 'axon:tools',
    },
    {
      client_id: 'axon-dashboard',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: [`${resource}/auth/callback`],
      scope: `openid ${scopes.join(' ')}`,
    },
  ],
  scopes: ['openid', ...scopes],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, indicator) => ({
        scope: scopes.join(' '),
        audience: indicator,
        accessTokenFormat: 'jwt',
        accessTokenTTL: 300,
        jwt: { sign: { alg: jwks.keys[0].alg } },
      }),
    },
  },
  });
  provider.proxy = false;
  return provider;
}

// The test-only signer: the provider's own keys (or none) over any claims.
async function mint(jwks, body) {
  const { claims, alg, kid, key } = body;
  const pick = (kty) => jwks.keys.find((k) => k.kty === kty);
  if (key === 'none') {
    return new jose.UnsecuredJWT(claims).encode();
  }
  if (key === 'hs-public') {
    // The classic confusion: HS256 keyed with the RSA public key's PEM.
    const { d, p, q, dp, dq, qi, ...pub } = pick('RSA');
    const pem = await jose.exportSPKI(await jose.importJWK(pub, 'RS256'));
    return new jose.SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: kid ?? pub.kid })
      .sign(new TextEncoder().encode(pem));
  }
  const jwk = pick({ rsa: 'RSA', ec: 'EC', okp: 'OKP' }[key ?? 'rsa']);
  const signing = await jose.importJWK(jwk, jwk.alg);
  return new jose.SignJWT(claims)
    .setProtectedHeader({ alg: alg ?? jwk.alg, kid: kid ?? jwk.kid, typ: 'at+jwt' })
    .sign(signing);
}

let jwks = await privateKeys();
let callback = () => {};
const server = createServer(async (req, res) => {
  if (req.method === 'POST' && req.url === '/test/rotate') {
    jwks = await newKeys();
    callback = makeProvider(issuer, jwks).callback();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kids: jwks.keys.map((k) => k.kid) }));
    return;
  }
  if (req.method === 'POST' && req.url === '/test/resource') {
    // The Axon a person signs in to, once its port is known.
    let raw = '';
    for await (const chunk of req) raw += chunk;
    resource = JSON.parse(raw).resource;
    callback = makeProvider(issuer, jwks).callback();
    res.writeHead(204).end();
    return;
  }
  if (req.method === 'POST' && req.url === '/test/mint') {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    try {
      const token = await mint(jwks, JSON.parse(raw));
      res.writeHead(200, { 'content-type': 'text/plain' }).end(token);
    } catch (e) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(String(e));
    }
    return;
  }
  callback(req, res);
});
await new Promise((ready) => server.listen(Number(args.port ?? 9400), '127.0.0.1', ready));
const issuer = `http://127.0.0.1:${server.address().port}`;
callback = makeProvider(issuer, jwks).callback();
console.log(`listening ${issuer}`);
