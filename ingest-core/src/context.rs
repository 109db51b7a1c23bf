//! Where a chunk sits, in words: the line that is embedded and indexed with
//! each chunk so that a passage from the middle of a page still carries the
//! page's name and its section.
//!
//! Why: a chunk's own text rarely names its subject. A page whose title lives
//! only in front matter (`title: Caching`) never says "caching" in its body,
//! and the third chunk of a long section does not repeat the section heading.
//! Embedding and indexing the bare text left such chunks unfindable by the
//! words a reader uses for them. The context is the document's title, then
//! the headings above the chunk (`Data fetching > Caching > Revalidating`),
//! and on the document's first chunk its description (front matter,
//! `<meta name="description">`), which is metadata the body does not carry.
//!
//! The stored `text` stays exactly the document's text, for display and
//! reassembly; the context is a column of its own. The embedder sees
//! [`embedding_input`]; the keyword index sees the context followed by the
//! text as one field (the server's `search_text` column).

/// The context line of one chunk.
///
/// The title leads, unless the first heading repeats it (Markdown pages
/// often open with `# Title`); empty parts are left out. `description` is
/// given for a document's first chunk only.
pub fn chunk_context(
    title: Option<&str>,
    heading_path: &[String],
    description: Option<&str>,
) -> String {
    let mut parts: Vec<&str> = Vec::with_capacity(heading_path.len() + 1);
    let title = title.map(str::trim).filter(|t| !t.is_empty());
    if let Some(t) = title {
        parts.push(t);
    }
    for (i, h) in heading_path.iter().enumerate() {
        let h = h.trim();
        let repeats_title = i == 0 && title.is_some_and(|t| same_words(t, h));
        if !h.is_empty() && !repeats_title {
            parts.push(h);
        }
    }
    let mut context = crate::chunk::heading_path(parts);
    if let Some(d) = description.map(str::trim).filter(|d| !d.is_empty()) {
        if !context.is_empty() {
            context.push('\n');
        }
        context.push_str(d);
    }
    context
}

/// The context line of each of a document's chunks, the description (if
/// any) on the first one only.
pub fn chunk_contexts(
    title: Option<&str>,
    description: Option<&str>,
    chunks: &[crate::chunk::Chunk],
) -> Vec<String> {
    chunks
        .iter()
        .map(|c| {
            let description = if c.index == 0 { description } else { None };
            chunk_context(title, &c.heading_path, description)
        })
        .collect()
}

/// What the embedding model reads for a chunk: its context, a blank line,
/// its text. The context comes first because the model reads only its first
/// 256 tokens; it is short (a title and a few headings) so it costs the
/// text little.
pub fn embedding_input(context: &str, text: &str) -> String {
    if context.is_empty() {
        return text.to_owned();
    }
    let mut input = String::with_capacity(context.len() + 2 + text.len());
    input.push_str(context);
    input.push_str("\n\n");
    input.push_str(text);
    input
}

/// Equal ignoring case, punctuation and spacing (`git-add(1)` vs `git add`
/// are not equal; `Getting Started` vs `getting started` are).
fn same_words(a: &str, b: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    words(a) == words(b)
}

/// [`embedding_input`] for each of a document's chunks, given their
/// contexts from [`chunk_contexts`]: what ingestion, the store upgrade and
/// the ingest bench all embed.
pub fn embedding_inputs(chunks: &[crate::chunk::Chunk], contexts: &[String]) -> Vec<String> {
    chunks
        .iter()
        .zip(contexts)
        .map(|(c, context)| embedding_input(context, &c.text))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn title_then_headings_without_repeating_the_title() {
        let c = chunk_context(
            Some("Caching"),
            &path(&["Caching", "Revalidating", "On demand"]),
            None,
        );
        assert_eq!(c, "Caching > Revalidating > On demand");
        let c = chunk_context(Some("git-add(1)"), &path(&["NAME"]), None);
        assert_eq!(c, "git-add(1) > NAME");
    }

    #[test]
    fn description_goes_on_its_own_line_and_blanks_are_dropped() {
        let c = chunk_context(Some(" "), &path(&["", "Usage"]), Some("Run it. "));
        assert_eq!(c, "Usage\nRun it.");
        assert_eq!(chunk_context(None, &[], None), "");
    }

    #[test]
    fn the_model_reads_context_before_text() {
        assert_eq!(embedding_input("A > B", "body"), "A > B\n\nbody");
        assert_eq!(embedding_input("", "body"), "body");
    }
}
