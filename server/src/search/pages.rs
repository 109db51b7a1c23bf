//! Results as pages: one answer per document, its best chunk leading.
//!
//! Why: ranked as chunks, one long page fills the list (over the git
//! manual, "cherry pick a range of commits" would return git-cherry-pick
//! five times in the top five). A person or an agent asking for ten
//! answers wants ten pages; the other places a page matches are still
//! worth showing, under it, as its sections.

use super::Candidate;

/// At most this many other chunks of a page are listed under it.
pub const MAX_SECTIONS: usize = 3;

/// A section is listed when it scores at least this share of its page's
/// lead: weaker chunks are the page's background, not a match.
pub const SECTION_SHARE: f32 = 0.8;

/// One result: a page's best candidate and its other strong ones.
#[derive(Debug, Clone)]
pub struct Page {
    pub lead: Candidate,
    pub sections: Vec<Candidate>,
}

impl Page {
    /// A chunk on its own, for `duplicates`.
    pub fn single(lead: Candidate) -> Self {
        Self {
            lead,
            sections: Vec::new(),
        }
    }

    pub fn library(&self) -> &str {
        &self.lead.chunk.library
    }

    pub fn score(&self) -> f32 {
        self.lead.score
    }
}

/// Groups a pool sorted best first into pages, in the order of their best
/// chunks. A page's lead is its best chunk; up to [`MAX_SECTIONS`] of its
/// other chunks scoring at least [`SECTION_SHARE`] of the lead follow it.
pub fn group(pool: Vec<Candidate>) -> Vec<Page> {
    let mut pages: Vec<Page> = Vec::new();
    let mut index: std::collections::HashMap<(String, String, String), usize> =
        std::collections::HashMap::new();
    for c in pool {
        let key = (
            c.chunk.library.clone(),
            c.chunk.version.clone(),
            c.chunk.file_path.clone(),
        );
        match index.get(&key) {
            Some(&i) => {
                let page = &mut pages[i];
                if page.sections.len() < MAX_SECTIONS && c.score >= page.lead.score * SECTION_SHARE
                {
                    page.sections.push(c);
                }
            }
            None => {
                index.insert(key, pages.len());
                pages.push(Page::single(c));
            }
        }
    }
    pages
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(path: &str, index: u32, score: f32) -> Candidate {
        Candidate::for_test(path, index, score)
    }

    #[test]
    fn one_result_per_page_with_strong_sections_under_it() {
        let pool = vec![
            candidate("a.md", 0, 1.0),
            candidate("a.md", 3, 0.95),
            candidate("b.md", 1, 0.9),
            candidate("a.md", 5, 0.85),
            candidate("a.md", 6, 0.5),
            candidate("c.md", 0, 0.4),
        ];
        let pages = group(pool);
        let paths: Vec<&str> = pages
            .iter()
            .map(|p| p.lead.chunk.file_path.as_str())
            .collect();
        assert_eq!(paths, ["a.md", "b.md", "c.md"]);
        let sections: Vec<u32> = pages[0]
            .sections
            .iter()
            .map(|s| s.chunk.chunk_index)
            .collect();
        // Chunk 6 is below the share of the lead: background, not a match.
        assert_eq!(sections, [3, 5]);
        assert!(pages[1].sections.is_empty());
    }
}
