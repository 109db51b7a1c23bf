//! A private site's credential as the header a crawl sends.

use url::Url;

use super::{CredentialError, Lent};

/// A private site's credential, sent as one header to requests for the
/// site's own origin (scheme, host and port) that the operator bound it
/// to: never to another host a page links or redirects to, nor to a path
/// of the site outside a bound prefix.
#[derive(Clone)]
pub struct SiteCredential {
    origin: url::Origin,
    lent: Lent,
    name: http::HeaderName,
    value: http::HeaderValue,
}

impl SiteCredential {
    /// The header a secret stands for, read as Git's is wherever the two
    /// agree: `user:password` as Basic credentials, a bare token as a
    /// bearer token (`Authorization: Bearer …`). A header is taken as
    /// written only when it names one a site signs in with: `Cookie: …`,
    /// `Authorization: …`, or an `X-…` header written with a space after
    /// its colon (`X-Api-Key: …`), since Git's own `x-access-token:TOKEN`
    /// is a user and password. The error names the credential, never the
    /// secret.
    pub fn new(site: &Url, lent: Lent) -> Result<Self, CredentialError> {
        let raw = lent.secret.expose();
        let header = raw.split_once(':').and_then(|(name, value)| {
            let name = name.trim().to_ascii_lowercase();
            let spelled_as_header = value.starts_with(' ');
            let signs_in = name == "cookie"
                || name == "authorization"
                || (name.starts_with("x-") && spelled_as_header);
            let value = value.trim();
            let name = http::HeaderName::from_bytes(name.as_bytes()).ok()?;
            (signs_in && !value.is_empty()).then(|| (name, value.to_owned()))
        });
        let (name, value) = match header {
            Some(header) => header,
            None if raw.contains(':') => (
                http::header::AUTHORIZATION,
                lent.secret.basic_authorization(),
            ),
            None => (http::header::AUTHORIZATION, format!("Bearer {raw}")),
        };
        let mut value = http::HeaderValue::from_str(&value)
            .map_err(|_| CredentialError::NotAHeader(lent.name.clone()))?;
        value.set_sensitive(true);
        Ok(Self {
            origin: site.origin(),
            lent,
            name,
            value,
        })
    }

    /// The header to send with a request for `url`, if `url` is on the
    /// site's origin and where the credential is bound.
    pub fn header_for(&self, url: &Url) -> Option<(&http::HeaderName, &http::HeaderValue)> {
        (url.origin() == self.origin && self.lent.admits(url)).then_some((&self.name, &self.value))
    }
}

impl std::fmt::Debug for SiteCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SiteCredential({}, {}: …)", self.lent.name, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Credentials, Declared};
    use super::*;

    /// `secret` lent as the credential `site`, bound to `bound`.
    fn lent(secret: &str, bound: &str) -> Lent {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        std::fs::write(&path, secret).unwrap();
        let declared = Declared::parse(&format!("site=file:{}@{bound}", path.display())).unwrap();
        let start = Url::parse("https://docs.intranet:8443/guide/").unwrap();
        Credentials::new(vec![declared])
            .unwrap()
            .lend("site", "lib", &[&start])
            .unwrap()
    }

    #[test]
    fn a_site_credential_is_a_header_for_its_origin_and_places_only() {
        let site = Url::parse("https://docs.intranet:8443/guide/").unwrap();
        let bearer = SiteCredential::new(&site, lent("s3cret", "docs.intranet:8443")).unwrap();
        let same = Url::parse("https://docs.intranet:8443/other/page").unwrap();
        let (name, value) = bearer.header_for(&same).expect("same origin");
        assert_eq!(
            (name.as_str(), value.to_str().unwrap()),
            ("authorization", "Bearer s3cret")
        );
        assert!(value.is_sensitive());
        for elsewhere in [
            "http://docs.intranet:8443/",
            "https://docs.intranet/",
            "https://cdn.example/x",
        ] {
            let url = Url::parse(elsewhere).unwrap();
            assert!(bearer.header_for(&url).is_none(), "{elsewhere}");
        }
        // Bound to a prefix: the rest of the origin goes without it.
        let guide = SiteCredential::new(&site, lent("s3cret", "https://docs.intranet:8443/guide/"))
            .unwrap();
        assert!(guide.header_for(&site.join("install").unwrap()).is_some());
        assert!(guide.header_for(&same).is_none());

        let header = |secret: &str| {
            let credential =
                SiteCredential::new(&site, lent(secret, "docs.intranet:8443")).unwrap();
            let (name, value) = credential.header_for(&same).expect("same origin");
            (name.to_string(), value.to_str().unwrap().to_owned())
        };
        let written = [
            ("Cookie: session=abc", "cookie", "session=abc"),
            ("reader:pa55", "authorization", "Basic cmVhZGVyOnBhNTU="),
            // Git's token form is a user and password, not an X- header.
            (
                "x-access-token:t0k",
                "authorization",
                "Basic eC1hY2Nlc3MtdG9rZW46dDBr",
            ),
            ("X-Api-Key: k3y", "x-api-key", "k3y"),
        ];
        for (secret, name, value) in written {
            assert_eq!(
                header(secret),
                (name.to_owned(), value.to_owned()),
                "{secret}"
            );
        }
        let cookie =
            SiteCredential::new(&site, lent("Cookie: session=abc", "docs.intranet:8443")).unwrap();
        assert!(!format!("{cookie:?}").contains("abc"));
        let bad = SiteCredential::new(&site, lent("X-Key: a\u{7f}b", "docs.intranet:8443"));
        assert_eq!(bad.unwrap_err(), CredentialError::NotAHeader("site".into()));
    }
}
