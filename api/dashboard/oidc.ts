/**
 * Optional OpenID Connect sign-in (authorization code flow with PKCE, state and nonce) through
 * openid-client, for installations with an identity provider. The person's tenant and role come
 * from two ID token claims (FOLIO_OIDC_TENANT_CLAIM, FOLIO_OIDC_ROLE_CLAIM); a role claim of
 * "operator" makes an operator. The provider is the source of truth: a person is created on first
 * sign-in and their role follows the claim each time.
 */
import * as client from "openid-client";
import type { Config } from "../../core/config.ts";
import type { Role } from "../store/users.ts";

export interface OidcStart {
  url: string;
  state: string;
  nonce: string;
  verifier: string;
}

export interface OidcIdentity {
  subject: string;
  email: string;
  tenant: string | null;
  role: Role | null;
}

export interface OidcSignIn {
  start(redirectUri: string): Promise<OidcStart>;
  finish(currentUrl: URL, checks: { state: string; nonce: string; verifier: string }): Promise<OidcIdentity>;
}

const ROLES: readonly string[] = ["owner", "developer", "viewer", "operator"];
const loopback = (u: URL): boolean => ["127.0.0.1", "localhost", "[::1]"].includes(u.hostname);

export function oidcSignIn(config: Config): OidcSignIn | null {
  const issuer = config.FOLIO_OIDC_ISSUER;
  if (!issuer || !config.FOLIO_OIDC_CLIENT_ID) return null;
  const issuerUrl = new URL(issuer);
  // Plain http only for a provider on this machine (as RFC 8252 allows loopback redirects).
  const insecure = issuerUrl.protocol === "http:" && loopback(issuerUrl);
  if (issuerUrl.protocol !== "https:" && !insecure) throw new Error("FOLIO_OIDC_ISSUER must be https (or http on loopback)");
  let discovered: Promise<client.Configuration> | null = null;
  const configuration = (): Promise<client.Configuration> => {
    discovered ??= client
      .discovery(
        issuerUrl,
        config.FOLIO_OIDC_CLIENT_ID!,
        config.FOLIO_OIDC_CLIENT_SECRET,
        undefined,
        insecure ? { execute: [client.allowInsecureRequests] } : {},
      )
      .catch((err: unknown) => {
        discovered = null; // try again next time: the provider may come up later
        throw err;
      });
    return discovered;
  };
  return {
    async start(redirectUri) {
      const c = await configuration();
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const url = client.buildAuthorizationUrl(c, {
        redirect_uri: redirectUri,
        scope: "openid email profile",
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
        state,
        nonce,
      });
      return { url: url.href, state, nonce, verifier };
    },
    async finish(currentUrl, checks) {
      const c = await configuration();
      const tokens = await client.authorizationCodeGrant(c, currentUrl, {
        pkceCodeVerifier: checks.verifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (!idClaims) throw new Error("no ID token");
      // Providers may keep scope claims (email, custom ones) out of the ID token when an access
      // token is issued (OpenID Connect Core §5.4): the UserInfo endpoint has them then.
      const info = await client.fetchUserInfo(c, tokens.access_token, idClaims.sub);
      const claims: Record<string, unknown> & { sub: string } = { ...info, ...idClaims };
      const email = typeof claims.email === "string" ? claims.email : "";
      const tenant = claims[config.FOLIO_OIDC_TENANT_CLAIM];
      const role = claims[config.FOLIO_OIDC_ROLE_CLAIM];
      return {
        subject: claims.sub,
        email,
        tenant: typeof tenant === "string" && tenant ? tenant : null,
        role: typeof role === "string" && ROLES.includes(role) ? (role as Role) : null,
      };
    },
  };
}
