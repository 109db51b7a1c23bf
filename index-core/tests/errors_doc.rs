//! `docs/errors.md` lists every error code, as the table declares it: the
//! page is rendered from [`ErrorCode::ALL`] and must equal the file, so a
//! code cannot be added, renamed or reworded without its documentation.
//! `DOCSHELF_BLESS=1 cargo test -p index-core --test errors_doc` rewrites
//! the page after a change to the table.

use index_core::{ErrorCode, ErrorKind};

fn rendered() -> String {
    let mut page = String::from(
        "# Error codes\n\n\
         Every error docshelf answers, on every face (REST, the dashboard, MCP, the CLI), is a body\n\
         of this shape:\n\n\
         ```json\n\
         {\"code\": \"unknown_library\", \"kind\": \"not_found\", \"error\": \"no library matches \\\"rust\\\"; …\",\n \
         \"link\": \"docs/errors.md#unknown_library\"}\n\
         ```\n\n\
         - `code` says exactly what went wrong. It is stable: match on it.\n\
         - `kind` is the class of failure, which decides the HTTP status (and, for an MCP message\n  \
         refused whole, the JSON-RPC code). A `busy` kind comes with `Retry-After`.\n\
         - `error` is meant for the person or agent who asked. Its words may change.\n\
         - `link` points at the code's entry below.\n\
         - `correlation_id` comes with `internal` only: the server's log holds the details under it.\n\n\
         In MCP, a failed tool call is a tool result with `isError` whose structured content is this\n\
         body; a message refused whole is a JSON-RPC error whose `data` is this body. The CLI prints\n\
         `error` and exits 3 for `not_found`, 4 for `busy`, `unavailable` and `conflict`, 5 for\n\
         `internal` and 2 for the rest.\n\n\
         This page is generated from the table in `index-core/src/error.rs`\n\
         (`index-core/tests/errors_doc.rs` keeps it equal).\n\n\
         | code | kind | HTTP |\n| --- | --- | --- |\n",
    );
    for &code in ErrorCode::ALL {
        let kind = code.kind();
        page.push_str(&format!(
            "| [`{code}`](#{code}) | `{kind}` | {} |\n",
            kind.http_status()
        ));
    }
    for kind in ErrorKind::ALL {
        let codes: Vec<_> = ErrorCode::ALL.iter().filter(|c| c.kind() == kind).collect();
        page.push_str(&format!("\n## `{kind}` ({})\n", kind.http_status()));
        for code in codes {
            page.push_str(&format!("\n### {code}\n\n{}\n", code.meaning()));
        }
    }
    page
}

#[test]
fn the_errors_page_lists_every_code() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/errors.md");
    let want = rendered();
    if std::env::var_os("DOCSHELF_BLESS").is_some() {
        std::fs::write(&path, &want).expect("write docs/errors.md");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/errors.md is not the table's page; rerun with DOCSHELF_BLESS=1"
    );
}
