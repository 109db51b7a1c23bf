//! "Add from URL": documentation taken from where it lives, a site to crawl,
//! a Git repository or a package on its registry, into a library version. The form posts a
//! [`SourceRequest`] to `POST /api/sources` and follows the job it starts
//! as the upload does.

use index_core::source::{
    CrawlScope, DocsFrom, SourceRequest, DEFAULT_KEEP, DEFAULT_MAX_DEPTH, DEFAULT_MAX_PAGES,
    MAX_DEPTH, MAX_KEEP, MAX_PAGES,
};
use leptos::prelude::*;

#[cfg(feature = "hydrate")]
use super::job::follow;
use super::job::{JobProgress, Progress};
use crate::components::LibraryNames;

/// The form's fields as typed.
#[derive(Debug, Clone, Default, PartialEq)]
struct Draft {
    url: String,
    library: String,
    version: String,
    max_pages: String,
    max_depth: String,
    include: String,
    exclude: String,
    scope: String,
    llms_txt: bool,
    git_ref: String,
    docs_path: String,
    credential: String,
    track: String,
    keep: String,
    from: String,
}

impl Draft {
    /// The request the fields ask for; what the server checks (the URL, the
    /// names, whether a site was given a version) is left to it.
    fn request(&self) -> Result<SourceRequest, String> {
        let (url, library) = (self.url.trim(), self.library.trim());
        if url.is_empty() || library.is_empty() {
            return Err("Give the URL or package and the library.".into());
        }
        let scope = match self.scope.as_str() {
            "" | "prefix" => None,
            "origin" => Some(CrawlScope::Origin),
            "domain" => Some(CrawlScope::Domain),
            other => return Err(format!("No such scope: {other}.")),
        };
        let version = self.version.trim();
        Ok(SourceRequest {
            url: url.to_owned(),
            library: library.to_owned(),
            version: (!version.is_empty()).then(|| version.to_owned()),
            max_pages: count(&self.max_pages, "Max pages")?,
            max_depth: count(&self.max_depth, "Max depth")?,
            include: patterns(&self.include),
            exclude: patterns(&self.exclude),
            scope,
            llms_txt: self.llms_txt,
            git_ref: given(&self.git_ref),
            docs_path: given(&self.docs_path),
            credential: given(&self.credential),
            track: given(&self.track),
            keep: count(&self.keep, "Keep")?,
            from: match self.from.as_str() {
                "" | "auto" => None,
                other => Some(
                    DocsFrom::ALL
                        .into_iter()
                        .find(|f| f.name() == other)
                        .ok_or_else(|| format!("No such place for docs: {other}."))?,
                ),
            },
        })
    }
}

/// A text field's value, if it holds one.
fn given(field: &str) -> Option<String> {
    let field = field.trim();
    (!field.is_empty()).then(|| field.to_owned())
}

/// A whole number a field holds, if any.
fn count(field: &str, name: &str) -> Result<Option<usize>, String> {
    let field = field.trim();
    if field.is_empty() {
        return Ok(None);
    }
    field
        .parse()
        .map(Some)
        .map_err(|_| format!("{name} must be a whole number."))
}

/// Globs separated by newlines or commas; a comma inside braces
/// (`/docs/{api,guide}/**`) belongs to its glob.
fn patterns(field: &str) -> Vec<String> {
    let mut globs = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in field.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth > 0 => {}
            ',' | '\n' | '\r' => {
                globs.push(std::mem::take(&mut current));
                depth = 0;
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    globs.push(current);
    globs
        .into_iter()
        .map(|g| g.trim().to_owned())
        .filter(|g| !g.is_empty())
        .collect()
}

/// The "Add from URL" panel. `added` runs when a source is accepted and
/// again when its job ends, so the list of sources can reload.
#[component]
pub(super) fn AddSource(added: Callback<()>) -> impl IntoView {
    let text = || RwSignal::new(String::new());
    let (url, library, version) = (text(), text(), text());
    let (max_pages, max_depth, include, exclude) = (text(), text(), text(), text());
    let scope = RwSignal::new(CrawlScope::default().name().to_owned());
    let llms_txt = RwSignal::new(false);
    let (git_ref, docs_path, credential) = (text(), text(), text());
    let (track, keep, from) = (text(), text(), text());
    let progress = RwSignal::new(Progress::Idle);
    let busy = move || progress.with(Progress::busy);

    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let draft = Draft {
            url: url.get_untracked(),
            library: library.get_untracked(),
            version: version.get_untracked(),
            max_pages: max_pages.get_untracked(),
            max_depth: max_depth.get_untracked(),
            include: include.get_untracked(),
            exclude: exclude.get_untracked(),
            scope: scope.get_untracked(),
            llms_txt: llms_txt.get_untracked(),
            git_ref: git_ref.get_untracked(),
            docs_path: docs_path.get_untracked(),
            credential: credential.get_untracked(),
            track: track.get_untracked(),
            keep: keep.get_untracked(),
            from: from.get_untracked(),
        };
        let request = match draft.request() {
            Ok(request) => request,
            Err(message) => {
                progress.set(Progress::Failed(message));
                return;
            }
        };
        progress.set(Progress::Sending);
        #[cfg(feature = "hydrate")]
        leptos::task::spawn_local(async move {
            if let Err(message) = send(&request, progress, added).await {
                progress.set(Progress::Failed(message));
            }
        });
        #[cfg(not(feature = "hydrate"))]
        let _ = (request, added);
    };
    view! {
        <section class="panel" aria-labelledby="add-source-heading">
            <h2 class="panel-title" id="add-source-heading">"Add from URL"</h2>
            <p class="muted" id="add-source-help">
                "A documentation site to crawl (" <code>"https://…"</code> "), a Git repository's docs folder ("
                <code>"git+https://…"</code> ", " <code>"…/name.git"</code> ", " <code>"https://github.com/owner/name"</code>
                "), or a package's docs from its registry: "
                <code>"pypi:attrs==24.2.0"</code> ", " <code>"npm:zod@3.23.8"</code> ", " <code>"crates:serde@1.0.210"</code>
                ". A site needs a version; a package's own version, or a repository's tag or branch, is used when none is given."
            </p>
            <form class="source-form" on:submit=submit aria-describedby="add-source-help">
                <div class="filters">
                    <label class="wide">
                        "URL or package"
                        <input
                            name="url"
                            required
                            placeholder="https://docs.example.com/guide/ or pypi:attrs==24.2.0"
                            autocomplete="url"
                            spellcheck="false"
                            prop:value=move || url.get()
                            on:input=move |ev| url.set(event_target_value(&ev))
                        />
                    </label>
                    // Not "Library": the upload form above has that field.
                    <label>
                        "Into library"
                        <input
                            name="library"
                            list="source-libraries"
                            required
                            placeholder="e.g. attrs"
                            prop:value=move || library.get()
                            on:input=move |ev| library.set(event_target_value(&ev))
                        />
                    </label>
                    <LibraryNames id="source-libraries"/>
                    <label>
                        "As version (optional for a package)"
                        <input name="version" placeholder="e.g. 24.2" prop:value=move || version.get() on:input=move |ev| version.set(event_target_value(&ev))/>
                    </label>
                </div>
                <details class="advanced">
                    <summary>"Crawl options"</summary>
                    <div class="filters">
                        <label>
                            "Max pages"
                            <input
                                name="max_pages"
                                type="number"
                                min="1"
                                max=MAX_PAGES.to_string()
                                placeholder=DEFAULT_MAX_PAGES.to_string()
                                prop:value=move || max_pages.get()
                                on:input=move |ev| max_pages.set(event_target_value(&ev))
                            />
                        </label>
                        <label>
                            "Max depth"
                            <input
                                name="max_depth"
                                type="number"
                                min="0"
                                max=MAX_DEPTH.to_string()
                                placeholder=DEFAULT_MAX_DEPTH.to_string()
                                prop:value=move || max_depth.get()
                                on:input=move |ev| max_depth.set(event_target_value(&ev))
                            />
                        </label>
                        <label>
                            "Scope"
                            <select
                                name="scope"
                                aria-describedby="scope-help"
                                on:change=move |ev| scope.set(event_target_value(&ev))
                            >
                                <option value="prefix">"Prefix: below the start URL's folder"</option>
                                <option value="origin">"Origin: the whole site"</option>
                                <option value="domain">"Domain: the host and its subdomains"</option>
                            </select>
                        </label>
                        <label class="check">
                            <input
                                type="checkbox"
                                name="llms_txt"
                                prop:checked=move || llms_txt.get()
                                on:change=move |ev| llms_txt.set(event_target_checked(&ev))
                            />
                            "Use the site's llms.txt where it has one"
                        </label>
                    </div>
                    <p class="muted" id="scope-help">
                        "Which links the crawl follows from the start URL. A package followed to its documentation site is crawled within its folder, under the page and depth bounds."
                    </p>
                    <div class="filters">
                        <label class="wide">
                            "Include (globs on the URL path, comma or newline separated)"
                            <textarea name="include" rows="2" placeholder="/docs/**" prop:value=move || include.get() on:input=move |ev| include.set(event_target_value(&ev))></textarea>
                        </label>
                        <label class="wide">
                            "Exclude"
                            <textarea name="exclude" rows="2" placeholder="**/changelog/**" prop:value=move || exclude.get() on:input=move |ev| exclude.set(event_target_value(&ev))></textarea>
                        </label>
                    </div>
                </details>
                <label>
                    "A package's docs from"
                    <select name="from" on:change=move |ev| from.set(event_target_value(&ev))>
                        <option value="auto">"Its repository at the release's tag, else its docs site, else its archive"</option>
                        <option value="repo">"Its Git repository only"</option>
                        <option value="site">"Its documentation site only (docs.rs for a crate)"</option>
                        <option value="package">"Its package archive only"</option>
                    </select>
                </label>
                <details class="advanced">
                    <summary>"Git and release options"</summary>
                    <div class="filters">
                        <label>
                            "Ref (tag, branch or commit)"
                            <input name="ref" placeholder="default branch" spellcheck="false" prop:value=move || git_ref.get() on:input=move |ev| git_ref.set(event_target_value(&ev))/>
                        </label>
                        <label>
                            "Docs folder"
                            <input name="docs_path" placeholder="found: docs/, doc/, website/docs/…" spellcheck="false" prop:value=move || docs_path.get() on:input=move |ev| docs_path.set(event_target_value(&ev))/>
                        </label>
                        <label class="wide">
                            "Credential (its name)"
                            <input
                                name="credential"
                                aria-describedby="credential-help"
                                placeholder="gitlab-ci"
                                spellcheck="false"
                                autocomplete="off"
                                prop:value=move || credential.get()
                                on:input=move |ev| credential.set(event_target_value(&ev))
                            />
                        </label>
                    </div>
                    <div class="filters">
                        <label>
                            "Track releases (tag or version pattern)"
                            <input name="track" aria-describedby="track-help" placeholder="v*" spellcheck="false" prop:value=move || track.get() on:input=move |ev| track.set(event_target_value(&ev))/>
                        </label>
                        <label>
                            "Keep"
                            <input
                                name="keep"
                                type="number"
                                min="1"
                                max=MAX_KEEP.to_string()
                                placeholder=DEFAULT_KEEP.to_string()
                                prop:value=move || keep.get()
                                on:input=move |ev| keep.set(event_target_value(&ev))
                            />
                        </label>
                    </div>
                    <p class="muted" id="track-help">
                        "With a pattern, each matching release (a repository's tags, a package's registry releases) becomes a version (give no ref, version or package release); each refresh adds new releases and drops the oldest past Keep."
                    </p>
                    <p class="muted" id="credential-help">
                        "For a private repository or site: the name of a credential the server's operator declared for its host (an admin sees them under Settings), never a token itself."
                    </p>
                </details>
                <button type="submit" class="primary" disabled=busy>
                    {move || if busy() { "Fetching…" } else { "Add" }}
                </button>
            </form>
            <JobProgress progress sending="Asking docshelf to fetch it…"/>
        </section>
    }
}

/// Posts the request, then follows the job until it ends.
#[cfg(feature = "hydrate")]
async fn send(
    request: &SourceRequest,
    progress: RwSignal<Progress>,
    added: Callback<()>,
) -> Result<(), String> {
    use index_core::source::SourceAccepted;

    use crate::client;

    let request = client::post("/api/sources")
        .json(request)
        .map_err(|e| e.to_string())?;
    let response = client::send(request).await.map_err(|e| e.to_string())?;
    let accepted: SourceAccepted = response
        .json()
        .await
        .map_err(|e| format!("the server's answer names no job: {e}"))?;
    added.run(());
    let followed = follow(&accepted.job_id, Some(&accepted.watch_token), progress).await;
    added.run(());
    followed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_split_on_commas_and_newlines_but_not_inside_braces() {
        assert_eq!(
            patterns(" /docs/** ,**/api/*\n\n/{guide,ref}/**\r\n"),
            vec!["/docs/**", "**/api/*", "/{guide,ref}/**"]
        );
        assert!(patterns(" , \n").is_empty());
    }

    #[test]
    fn a_draft_asks_only_for_what_was_given() {
        let draft = Draft {
            url: " pypi:attrs==24.2.0 ".into(),
            library: "attrs".into(),
            scope: "prefix".into(),
            ..Draft::default()
        };
        assert_eq!(
            draft.request().unwrap(),
            SourceRequest {
                url: "pypi:attrs==24.2.0".into(),
                library: "attrs".into(),
                ..SourceRequest::default()
            }
        );
    }

    #[test]
    fn a_draft_reads_its_crawl_options() {
        let draft = Draft {
            url: "https://x.io/docs/".into(),
            library: "x".into(),
            version: "2".into(),
            max_pages: "50".into(),
            max_depth: "3".into(),
            include: "/docs/**".into(),
            exclude: "**/old/**, **/blog/**".into(),
            scope: "domain".into(),
            llms_txt: true,
            docs_path: " docs/en ".into(),
            ..Draft::default()
        };
        let r = draft.request().unwrap();
        assert_eq!(r.docs_path.as_deref(), Some("docs/en"));
        assert_eq!((r.git_ref, r.credential), (None, None));
        assert_eq!((r.max_pages, r.max_depth), (Some(50), Some(3)));
        assert_eq!(r.version.as_deref(), Some("2"));
        assert_eq!(r.exclude, vec!["**/old/**", "**/blog/**"]);
        assert_eq!(r.scope, Some(CrawlScope::Domain));
        assert!(r.llms_txt);
        let bad = Draft {
            max_pages: "many".into(),
            ..draft
        };
        assert!(bad.request().unwrap_err().contains("Max pages"));
        assert!(Draft::default().request().is_err());
    }
}
