// Sign-in through a managed login with Amazon Cognito's endpoints: the
// OAuth 2.0 authorization code grant with PKCE (RFC 7636, S256) for a
// public client, which has no secret. app.js calls beginSignIn,
// finishSignIn and signOutURL when config.json names an authUrl and a
// clientId; otherwise the page asks for a token and none of this runs.
//
// What is kept, and where: the PKCE verifier and the state live in
// sessionStorage only from the redirect to the managed login until the
// page comes back (the page is reloaded in between, so memory would not
// do); the access token is kept in sessionStorage by app.js, so that a
// reload of the tab does not sign the user in again, and it goes when the
// tab closes. The refresh token is not kept at all: a long-lived
// credential in storage any script of the page could read is not worth a
// click, and the managed login's own session signs the user in again
// without a password while it lasts.
"use strict";

const pkceKey = "usermemory.signin";

// base64url encodes bytes without padding (RFC 4648, section 5).
function base64url(bytes) {
  let s = "";
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function randomText(bytes) {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

// pageURL is the page's own address without query or fragment: the
// redirect_uri, which must be one of the client's callback URLs exactly,
// and the logout_uri.
function pageURL() { return location.origin + location.pathname; }

// beginSignIn sends the browser to the managed login with a new verifier
// (32 random bytes, 43 characters) and state (16 bytes).
async function beginSignIn(auth) {
  const verifier = randomText(32);
  const state = randomText(16);
  const challenge = base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  sessionStorage.setItem(pkceKey, JSON.stringify({ verifier, state }));
  const q = new URLSearchParams({
    response_type: "code", client_id: auth.clientId, redirect_uri: pageURL(),
    scope: ["openid", auth.scope].filter(Boolean).join(" "), state,
    code_challenge: challenge, code_challenge_method: "S256",
  });
  location.assign(auth.url + "/oauth2/authorize?" + q);
}

// signInError is an error of the sign-in, shown as the page shows the
// API's errors (its userMessage).
function signInError(text) { return { userMessage: text }; }

// finishSignIn reads the managed login's answer from the query (params),
// takes the code and state out of the address bar, checks the state
// against the one this tab sent, and redeems the code with the verifier.
// It returns the access token, or throws an error that says what failed.
async function finishSignIn(auth, params) {
  const saved = JSON.parse(sessionStorage.getItem(pkceKey) || "null");
  sessionStorage.removeItem(pkceKey); // One answer per sign-in, right or wrong.
  history.replaceState(null, "", location.pathname);
  if (params.has("error")) {
    throw signInError("Sign-in did not complete: " + (params.get("error_description") || params.get("error")) + ".");
  }
  if (!saved || !params.get("state") || params.get("state") !== saved.state) {
    throw signInError("This sign-in answer is not one this page asked for, so it was not used. Sign in again.");
  }
  const res = await fetch(auth.url + "/oauth2/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code", client_id: auth.clientId, code: params.get("code") || "",
      redirect_uri: pageURL(), code_verifier: saved.verifier,
    }),
  });
  let data = {};
  try { data = await res.json(); } catch { /* not JSON: said below */ }
  if (!res.ok || !data.access_token) {
    throw signInError("Sign-in did not complete: " + (data.error_description || data.error || "the token endpoint answered " + res.status) + ". Sign in again.");
  }
  return data.access_token;
}

// signOutURL ends the managed login's session too, then comes back to the
// page (the client's sign-out URL).
function signOutURL(auth) {
  return auth.url + "/logout?" + new URLSearchParams({ client_id: auth.clientId, logout_uri: pageURL() });
}
