//! Stored documents as MCP resources: `docshelf://LIBRARY/VERSION/PATH`,
//! listed library by library (only the libraries the caller may read), and
//! read whole or by section within a token budget:
//! `…/PATH?section=Guide%20%3E%20Install&max_tokens=2000`. The path keeps
//! its `/`; every other character outside the URI's unreserved set is
//! percent-encoded.
//!
//! A comparison of two versions is a resource too, by template only (there
//! is one for every pair of versions): `docshelf-changes://LIBRARY/FROM/TO`,
//! with `?file_path=PREFIX&max_tokens=N`, read as the JSON text the
//! `compare_versions` tool answers. It has a scheme of its own because
//! under `docshelf://` any shape would also be a document's address: a
//! version may be named `changes`, and a path may be anything.

use index_core::access::Caller;
use index_core::changes::ChangesRequest;
use index_core::reading::{DocumentPart, DocumentRead, ReadError};
use index_core::validate::cut;
use index_core::{ErrorBody, ErrorCode, ErrorKind};
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use rmcp::ErrorData;

use super::results::structured;
use crate::engine::{Engine, EngineError};

const SCHEME: &str = "docshelf://";

/// Comparisons' scheme: one no document address can take.
const CHANGES_SCHEME: &str = "docshelf-changes://";

/// Documents per page of `resources/list`.
const PAGE: usize = 200;

/// What a name part keeps unencoded: RFC 3986's unreserved characters.
const PART: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');
/// A path also keeps its separators.
const PATH: &AsciiSet = &PART.remove(b'/');

/// The resource of a whole document.
pub fn uri_of(library: &str, version: &str, file_path: &str) -> String {
    format!(
        "{SCHEME}{}/{}/{}",
        utf8_percent_encode(library, PART),
        utf8_percent_encode(version, PART),
        utf8_percent_encode(file_path, PATH)
    )
}

/// What a resource address asks to read: its shape parsed here, its parts
/// checked as `get_document`'s arguments are ([`DocumentRead::new`]). Every
/// refusal is a [`ReadError`], so it reaches the client as every other
/// error does: with the table's code in the error's data ([`to_error`]).
pub fn parse(uri: &str) -> Result<DocumentRead, ReadError> {
    let shown = || cut(uri, 200);
    let rest = uri
        .strip_prefix(SCHEME)
        .ok_or_else(|| ReadError::Address(shown()))?;
    let (location, query) = rest.split_once('?').unwrap_or((rest, ""));
    let mut parts = location.splitn(3, '/');
    let (Some(library), Some(version), Some(path)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(ReadError::Address(shown()));
    };
    let decode = |s: &str| {
        percent_decode_str(s)
            .decode_utf8()
            .map(|d| d.into_owned())
            .map_err(|_| ReadError::Encoding(shown()))
    };
    let (library, version, file_path) = (decode(library)?, decode(version)?, decode(path)?);
    if library.is_empty() || version.is_empty() || file_path.is_empty() {
        return Err(ReadError::Address(shown()));
    }
    let (mut section, mut max_tokens) = (None, None);
    for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
        match key.as_ref() {
            "section" => section = Some(value.into_owned()),
            "max_tokens" => {
                let n = value
                    .parse()
                    .map_err(|_| ReadError::BudgetNotANumber(cut(&value, 40)))?;
                max_tokens = Some(n);
            }
            other => return Err(ReadError::Parameter(cut(other, 40))),
        }
    }
    DocumentRead::new(
        &library,
        &version,
        &file_path,
        section.as_deref(),
        max_tokens,
    )
}

/// The resource of a comparison of `library` from `from` to `to`.
pub fn changes_uri_of(library: &str, from: &str, to: &str) -> String {
    format!(
        "{CHANGES_SCHEME}{}/{}/{}",
        utf8_percent_encode(library, PART),
        utf8_percent_encode(from, PART),
        utf8_percent_encode(to, PART)
    )
}

/// What a comparison's address asks: the library and the request, checked
/// as `compare_versions`' arguments are ([`ChangesRequest::check`]), each
/// refusal a [`ReadError`] as a document address's is.
pub fn parse_changes(uri: &str) -> Result<(String, ChangesRequest), ReadError> {
    let shown = || cut(uri, 200);
    let rest = uri
        .strip_prefix(CHANGES_SCHEME)
        .ok_or_else(|| ReadError::ChangesAddress(shown()))?;
    let (location, query) = rest.split_once('?').unwrap_or((rest, ""));
    let parts: Vec<&str> = location.split('/').collect();
    let [library, from, to] = parts[..] else {
        return Err(ReadError::ChangesAddress(shown()));
    };
    let decode = |s: &str| {
        percent_decode_str(s)
            .decode_utf8()
            .map(|d| d.into_owned())
            .map_err(|_| ReadError::Encoding(shown()))
    };
    let (library, from, to) = (decode(library)?, decode(from)?, decode(to)?);
    if library.is_empty() || from.is_empty() || to.is_empty() {
        return Err(ReadError::ChangesAddress(shown()));
    }
    let mut request = ChangesRequest {
        from,
        to,
        file_path: None,
        max_tokens: None,
    };
    for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
        match key.as_ref() {
            "file_path" => request.file_path = Some(value.into_owned()),
            "max_tokens" => {
                let n = value
                    .parse()
                    .map_err(|_| ReadError::BudgetNotANumber(cut(&value, 40)))?;
                request.max_tokens = Some(n);
            }
            other => return Err(ReadError::ChangesParameter(cut(other, 40))),
        }
    }
    request.check(&library)?;
    Ok((library, request))
}

/// The templates agents fill in: a document or a section, and a
/// comparison of two versions.
pub fn templates() -> ListResourceTemplatesResult {
    let template = ResourceTemplate::new(
        format!("{SCHEME}{{library}}/{{version}}/{{+file_path}}{{?section,max_tokens}}"),
        "document",
    )
    .with_description(
        "A stored document (version may be \"latest\"), whole or one section by the heading \
         path a search result gives (\"Guide > Install\", or its last part), within max_tokens \
         (o200k_base) when given: the text is cut where a block starts (inside the first block \
         of text when only headings would fit).",
    )
    .with_mime_type("text/markdown");
    let changes = ResourceTemplate::new(
        format!("{CHANGES_SCHEME}{{library}}/{{from}}/{{to}}{{?file_path,max_tokens}}"),
        "changes",
    )
    .with_description(
        "What changed in a library from one version to another (either may be \"latest\"), as \
         the compare_versions tool answers: documents changed, added, removed and moved, and \
         their sections, changed ones as a word diff ([-removed-]{+added+}); only documents \
         under file_path (a path prefix) when given, within max_tokens (o200k_base) when given.",
    )
    .with_mime_type("application/json");
    ListResourceTemplatesResult::with_all_items(vec![template, changes])
}

/// One page of the documents `caller` may read, library by library, from
/// the offset `cursor` names.
pub async fn list(
    engine: &Engine,
    caller: &Caller,
    cursor: Option<&str>,
) -> Result<ListResourcesResult, ErrorData> {
    let from: usize = match cursor {
        None => 0,
        Some(c) => c.parse().map_err(|_| {
            rpc_error(ErrorBody::new(
                ErrorCode::InvalidArguments,
                format!("cursor {:?} is not one this server gave", cut(c, 40)),
            ))
        })?,
    };
    let mut documents = engine.readable_documents(caller).await.map_err(to_error)?;
    documents.sort_by(|a, b| {
        (&a.library, &a.version, &a.file_path).cmp(&(&b.library, &b.version, &b.file_path))
    });
    let more = documents.len() > from.saturating_add(PAGE);
    let page: Vec<Resource> = documents
        .into_iter()
        .skip(from)
        .take(PAGE)
        .map(|doc| {
            let uri = uri_of(&doc.library, &doc.version, &doc.file_path);
            let name = format!("{} {} {}", doc.library, doc.version, doc.file_path);
            let resource = Resource::new(uri, name).with_mime_type("text/markdown");
            match doc.title {
                Some(title) => resource.with_title(title),
                None => resource,
            }
        })
        .collect();
    if more {
        let mut result = ListResourcesResult::with_all_items(page);
        result.next_cursor = Some((from + PAGE).to_string());
        return Ok(result);
    }
    Ok(ListResourcesResult::with_all_items(page))
}

/// Reads the document, section or comparison `uri` names, as `caller`.
pub async fn read(
    engine: &Engine,
    caller: &Caller,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    if uri.starts_with(CHANGES_SCHEME) {
        return read_changes(engine, caller, uri).await;
    }
    let read = parse(uri).map_err(|e| to_error(e.into()))?;
    let part: DocumentPart = engine
        .read_document(caller, &read)
        .await
        .map_err(to_error)?;
    let contents = ResourceContents::text(part.text, uri).with_mime_type("text/markdown");
    Ok(ReadResourceResult::new(vec![contents]))
}

/// Reads the comparison `uri` names, as `caller` (a library it may not
/// read is unknown, as everywhere): the text is the `compare_versions`
/// tool's own, from the same writer ([`structured`]), so the two cannot
/// drift apart.
async fn read_changes(
    engine: &Engine,
    caller: &Caller,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let (library, request) = parse_changes(uri).map_err(|e| to_error(e.into()))?;
    let changes = engine
        .compare_versions(caller, &library, &request)
        .await
        .map_err(to_error)?;
    let answer = structured(&changes);
    let written = answer.content.first().and_then(|c| c.as_text());
    let Some(text) = written.filter(|_| answer.is_error != Some(true)) else {
        let id = uuid::Uuid::new_v4().to_string();
        tracing::error!(correlation_id = %id, "a comparison could not be written as JSON");
        return Err(rpc_error(ErrorBody::internal(id)));
    };
    let text = text.text.clone();
    let contents = ResourceContents::text(text, uri).with_mime_type("application/json");
    Ok(ReadResourceResult::new(vec![contents]))
}

/// An engine error as MCP's ([`rpc_error`] of its body: internal faults
/// logged and reported by correlation id, as on every face).
fn to_error(err: EngineError) -> ErrorData {
    rpc_error(err.body())
}

/// An error body as MCP's: not found as `resource_not_found`, bad input as
/// invalid parameters, the rest as internal; the message, and the body
/// itself (its `code` and `kind`) as the error's data, as every face gives
/// them.
fn rpc_error(body: ErrorBody) -> ErrorData {
    let data = serde_json::to_value(&body).ok();
    match body.kind {
        ErrorKind::NotFound => ErrorData::resource_not_found(body.error, data),
        ErrorKind::BadInput => ErrorData::invalid_params(body.error, data),
        _ => ErrorData::internal_error(body.error, data),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_uris_round_trip_with_their_query() {
        let uri = uri_of("git", "2.40", "https://x.dev/a b/git-add.html");
        assert_eq!(
            uri,
            "docshelf://git/2.40/https%3A//x.dev/a%20b/git-add.html"
        );
        let read = parse(&format!(
            "{uri}?section=Guide%20%3E%20Install&max_tokens=300"
        ))
        .expect("parses");
        assert_eq!(read.file_path, "https://x.dev/a b/git-add.html");
        assert_eq!(read.section.as_deref(), Some("Guide > Install"));
        assert_eq!(read.max_tokens, Some(300));
        for bad in [
            "http://git/2.40/x",
            "docshelf://git/2.40",
            "docshelf://git/2.40/x?page=2",
            "docshelf://g/v/%FF",
            "docshelf://g/v/x?max_tokens=10",
            "docshelf://g/v/x?section=a%01b",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn comparison_uris_round_trip_and_never_read_as_a_document() {
        let uri = changes_uri_of("git", "2.39 rc", "latest");
        assert_eq!(uri, "docshelf-changes://git/2.39%20rc/latest");
        let (library, request) =
            parse_changes(&format!("{uri}?file_path=guide%2F&max_tokens=300")).expect("parses");
        assert_eq!(library, "git");
        assert_eq!(
            (request.from.as_str(), request.to.as_str()),
            ("2.39 rc", "latest")
        );
        assert_eq!(request.file_path.as_deref(), Some("guide/"));
        assert_eq!(request.max_tokens, Some(300));
        // Not a document's address, whatever its parts are named.
        assert!(parse(&uri).is_err());
        assert!(parse_changes("docshelf://git/changes/2.39").is_err());
        for bad in [
            "docshelf-changes://git/2.39",
            "docshelf-changes://git/2.39/2.40/x",
            "docshelf-changes://git//2.40",
            "docshelf-changes://git/2.39/2.40?section=a",
            "docshelf-changes://git/%FF/2.40",
            "docshelf-changes://git/2.39/2.40?max_tokens=10",
            "docshelf-changes://git/2.39/2.40?max_tokens=many",
        ] {
            assert!(parse_changes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_budget_that_is_not_a_number_is_refused_as_a_read_with_its_code() {
        let err = parse("docshelf://g/v/x.md?max_tokens=1e12").expect_err("refused");
        assert_eq!(err, ReadError::BudgetNotANumber("1e12".into()));
        let answer = to_error(err.into());
        let data = answer.data.expect("the error body as data");
        assert_eq!(data["code"], "invalid_read", "{data}");
        assert_eq!(data["kind"], "bad_input", "{data}");
        assert_eq!(answer.code, ErrorData::invalid_params("", None).code);
    }
}
