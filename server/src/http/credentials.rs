//! Where a request carries its credential, read one way for every route:
//! the `Authorization: Bearer` header, the dashboard's session cookie, and
//! the query-string names that are refused because logs keep URLs.

use axum::http::{header, HeaderMap};
use base64::Engine as _;

/// The name of the dashboard's session cookie. It holds the token itself
/// (encoded), `HttpOnly` so the page's scripts cannot read it: any replica
/// can then check it, as it checks a bearer token.
pub const SESSION_COOKIE: &str = "docshelf_session";

/// Query parameters that carry credentials in other APIs; a request naming
/// one is refused whatever its value.
const CREDENTIAL_PARAMS: [&str; 6] = [
    "token",
    "access_token",
    "api_key",
    "apikey",
    "auth",
    "authorization",
];

/// The credential parameter a query string names, if it names one.
pub(super) fn token_in_query(query: &str) -> Option<String> {
    url::form_urlencoded::parse(query.as_bytes())
        .map(|(name, _)| name.to_ascii_lowercase())
        .find(|name| CREDENTIAL_PARAMS.contains(&name.as_str()))
}

/// The request's credential: its bearer token, else its session cookie.
#[cfg(test)]
fn credential(headers: &HeaderMap) -> Option<String> {
    if let Some(token) = bearer(headers) {
        return Some(token.to_owned());
    }
    session_cookie(headers)
}

/// The token of an `Authorization: Bearer <token>` header, read as
/// RFC 9110 (§11.4) writes credentials: the scheme in any case, then one
/// or more spaces, then the token. So `Bearer  t` and `bearer t` carry
/// `t`; a header of another scheme carries no bearer token. The token
/// itself is compared whole: whitespace inside or after it (which HTTP
/// does not strip from inside a value) makes it a different token. An
/// empty token is none.
pub(super) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| rest.trim_start_matches(' '))
        .filter(|t| !t.is_empty())
}

/// The token in the session cookie, if the request carries one.
pub(super) fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .and_then(|(_, value)| decode_cookie(value))
}

/// The `Set-Cookie` value for the session cookie: `token` kept for
/// `max_age_secs`, or, with none, the cookie removed. `HttpOnly` so the
/// page's scripts cannot read it, `SameSite=Strict` so other sites' pages
/// never send it, `Secure` when the client came over TLS.
pub fn session_cookie_header(token: Option<&str>, max_age_secs: u64, secure: bool) -> String {
    let (value, max_age) = match token {
        Some(token) => (encode_cookie(token), max_age_secs),
        None => (String::new(), 0),
    };
    format!(
        "{SESSION_COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{}",
        if secure { "; Secure" } else { "" }
    )
}

/// A token as a cookie value: URL-safe base64, so any token fits the
/// cookie grammar (RFC 6265 §4.1.1).
pub fn encode_cookie(token: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token)
}

fn decode_cookie(value: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(value)
        .ok()?;
    String::from_utf8(bytes).ok().filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(name, value.parse().expect("a header value"));
        }
        headers
    }

    #[test]
    fn the_bearer_token_is_read_as_rfc_9110_writes_it() {
        for (value, token) in [
            ("Bearer t0k", Some("t0k")),
            ("Bearer  t0k", Some("t0k")),
            ("bearer t0k", Some("t0k")),
            ("BEARER t0k", Some("t0k")),
            ("Bearer t0k x", Some("t0k x")),
            ("Bearer ", None),
            ("Basic dXNlcjpwYXNz", None),
            ("Bearer", None),
            ("Bearert0k", None),
        ] {
            assert_eq!(
                bearer(&headers(&[(header::AUTHORIZATION, value)])),
                token,
                "{value:?}"
            );
        }
    }

    #[test]
    fn the_session_cookie_carries_any_token_and_the_header_wins() {
        let token = "odd; token=\"x\"";
        let cookie = format!("a=1; {SESSION_COOKIE}={}; b=2", encode_cookie(token));
        let only_cookie = headers(&[(header::COOKIE, &cookie)]);
        assert_eq!(credential(&only_cookie).as_deref(), Some(token));
        let both = headers(&[
            (header::COOKIE, &cookie),
            (header::AUTHORIZATION, "Bearer other"),
        ]);
        assert_eq!(credential(&both).as_deref(), Some("other"));
        let broken = headers(&[(header::COOKIE, "docshelf_session=!!!")]);
        assert_eq!(credential(&broken), None);
    }

    #[test]
    fn credentials_in_the_query_string_are_found_by_name() {
        assert_eq!(token_in_query("q=x&Token=abc").as_deref(), Some("token"));
        assert_eq!(
            token_in_query("access_token=").as_deref(),
            Some("access_token")
        );
        assert_eq!(token_in_query("watch=abc&q=token"), None);
    }
}
