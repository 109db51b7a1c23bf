//! What a source asks to take from a repository or a package beyond the
//! defaults: its include globs and its page bound.

/// What a source asks to take beyond the defaults: `include` globs over
/// file paths (`docs/**`, `CHANGELOG.md`), which choose the files instead
/// of the docs folder and take release notes they name; and a most
/// (`max_pages`), taken in path order.
#[derive(Debug, Clone, Default)]
pub struct DocsSelection {
    include: Vec<glob::Pattern>,
    max_files: Option<usize>,
}

impl DocsSelection {
    /// From a request's `include` globs and page bound.
    pub fn new(include: &[String], max_files: Option<usize>) -> Result<Self, String> {
        let include = include
            .iter()
            .map(|g| {
                glob::Pattern::new(g.trim_start_matches('/')).map_err(|e| format!("{g:?}: {e}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { include, max_files })
    }

    /// Whether include globs choose the files.
    pub fn chooses(&self) -> bool {
        !self.include.is_empty()
    }

    /// Whether `path` matches an include glob.
    pub fn includes(&self, path: &str) -> bool {
        let options = glob::MatchOptions {
            require_literal_separator: true,
            ..glob::MatchOptions::new()
        };
        self.include.iter().any(|g| g.matches_with(path, options))
    }

    /// Keeps the first files within the bound, in path order; says how
    /// many were left out past it.
    pub fn cut<T>(&self, files: &mut Vec<T>, path: impl Fn(&T) -> &str) -> usize {
        files.sort_by(|a, b| path(a).cmp(path(b)));
        let keep = self.max_files.unwrap_or(usize::MAX);
        let over = files.len().saturating_sub(keep);
        files.truncate(keep);
        over
    }
}
