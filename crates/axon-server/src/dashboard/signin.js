// Signing a person in to the dashboard through the identity provider
// (`[server.auth.dashboard]`): the authorization code flow with PKCE, as a
// public client (RFC 9700 §2.1.1; no secret in a page). The access token is
// kept in this tab's session storage, as a pasted token is, and sent as
// `Authorization: Bearer …` by app.js. Nothing here runs unless the server
// names a client (`/auth/dashboard.json`).
"use strict";

window.axonSignIn = (() => {
  const SAVED = "axon-signin";
  const callback = () => location.origin + "/auth/callback";
  const b64url = (bytes) =>
    btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const random = (n) => b64url(crypto.getRandomValues(new Uint8Array(n)));

  // The server's sign-in settings, or null when it names no client.
  async function settings() {
    const response = await fetch("/auth/dashboard.json", { headers: { Accept: "application/json" } });
    return response.ok ? response.json() : null;
  }

  // The issuer's endpoints (OpenID discovery), checked to be its own.
  async function endpoints(issuer) {
    const response = await fetch(issuer.replace(/\/$/, "") + "/.well-known/openid-configuration");
    if (!response.ok) throw new Error("the identity provider's metadata: HTTP " + response.status);
    const metadata = await response.json();
    if (metadata.issuer.replace(/\/$/, "") !== issuer.replace(/\/$/, "")) {
      throw new Error("the identity provider's metadata names another issuer");
    }
    return metadata;
  }

  // Off to the provider's sign-in page; back at /auth/callback.
  async function start(config) {
    const metadata = await endpoints(config.issuer);
    const verifier = random(32);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
    const state = random(16);
    sessionStorage.setItem(SAVED, JSON.stringify({
      verifier, state, token_endpoint: metadata.token_endpoint,
      back: location.pathname === "/auth/callback" ? "/" : location.pathname + location.search,
    }));
    const url = new URL(metadata.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: "code", client_id: config.client_id, redirect_uri: callback(),
      scope: config.scopes.join(" "), state, resource: config.resource,
      code_challenge: b64url(new Uint8Array(digest)), code_challenge_method: "S256",
    }).toString();
    location.assign(url.toString());
  }

  // At /auth/callback: the code for a token, then back where the person was.
  async function finish() {
    const params = new URLSearchParams(location.search);
    const saved = JSON.parse(sessionStorage.getItem(SAVED) || "null");
    sessionStorage.removeItem(SAVED);
    history.replaceState(null, "", (saved && saved.back) || "/");
    if (!saved || params.get("state") !== saved.state) throw new Error("sign-in failed: its state does not match (start again)");
    if (params.get("error")) throw new Error("sign-in failed: " + (params.get("error_description") || params.get("error")));
    const config = await settings();
    const response = await fetch(saved.token_endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code", code: params.get("code") || "", redirect_uri: callback(),
        client_id: config.client_id, code_verifier: saved.verifier, resource: config.resource,
      }),
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok || !body.access_token) {
      throw new Error("sign-in failed: " + (body.error_description || body.error || response.status));
    }
    sessionStorage.setItem("axon-token", body.access_token);
  }

  // Beside the token form: a button that signs in, when the server has a client.
  async function offer(form) {
    if (form.querySelector("#sign-in")) return;
    const config = await settings().catch(() => null);
    if (!config) return;
    const button = document.createElement("button");
    button.type = "button";
    button.id = "sign-in";
    button.textContent = "Sign in with " + new URL(config.issuer).host;
    button.addEventListener("click", () =>
      start(config).catch((e) => { document.getElementById("main").textContent = "Sign-in failed: " + e.message; }));
    form.append(button);
  }

  return { offer, finish };
})();
