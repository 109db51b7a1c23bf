//! A Python package's public API, from the modules of its sdist or wheel:
//! which files are its modules, what each module makes public, and the
//! name each definition is documented under.
//!
//! A name is public as Python's conventions say: in its module's
//! `__all__` when the module sets one, else not starting with `_`, in a
//! module whose dotted path has no part starting with `_`. Packages
//! re-export: `httpx.Client` is defined in the private `httpx._client`
//! and public only as `httpx.Client`, and click's `click.option` is
//! `click.decorators.option` too. Each definition is documented once,
//! under the shortest public name it has, and the others are listed.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::python::{self, Module};
use super::render::{Entry, Page};
use super::symbol::Symbol;

/// Top folders of a source tree that hold no modules of the package.
const NOT_THE_PACKAGE: [&str; 14] = [
    "tests",
    "test",
    "testing_support",
    "docs",
    "doc",
    "examples",
    "example",
    "benchmarks",
    "bench",
    "scripts",
    "tools",
    "build",
    "requirements",
    "ci",
];

/// Files at a tree's top that are tooling, not a module to import.
const NOT_MODULES: [&str; 8] = [
    "setup",
    "conftest",
    "noxfile",
    "fabfile",
    "tasks",
    "manage",
    "conf",
    "hatch_build",
];

/// How many re-export hops are followed (`a` from `.b` from `._c`).
const MAX_HOPS: usize = 8;

/// A source file of the archive: its path and text.
pub(super) struct SourceFile {
    pub path: String,
    pub text: String,
}

/// The module each file is, by path: `click-8.1.7/src/click/core.py` is
/// `click.core`; `None` for files that are no module of the package.
pub(super) fn module_names(paths: &[&str], distribution: &str) -> HashMap<String, (String, bool)> {
    let files: HashSet<&str> = paths.iter().copied().collect();
    // An sdist's files sit under one folder (`name-version/`); a wheel's
    // at the top.
    let top = common_top(paths);
    let mut names = HashMap::new();
    for &path in paths {
        let Some(rel) = path.strip_prefix(top.as_str()) else {
            continue;
        };
        let rel = rel
            .strip_prefix("src/")
            .or_else(|| rel.strip_prefix("lib/"))
            .unwrap_or(rel);
        let Some(stem) = rel.strip_suffix(".pyi").or_else(|| rel.strip_suffix(".py")) else {
            continue;
        };
        let parts: Vec<&str> = stem.split('/').collect();
        if parts.len() > 1 && NOT_THE_PACKAGE.contains(&parts[0]) {
            continue;
        }
        if parts.iter().any(|p| !is_identifier(p)) {
            continue;
        }
        // Every folder on the way must be a package (have an `__init__`).
        let dir_of = |n: usize| path[..path.len() - rel.len()].to_owned() + &parts[..n].join("/");
        let packaged = (1..parts.len()).all(|n| {
            let dir = dir_of(n);
            files.contains(format!("{dir}/__init__.py").as_str())
                || files.contains(format!("{dir}/__init__.pyi").as_str())
        });
        if !packaged {
            continue;
        }
        // A module alone at the top is the package only when it is named
        // as the distribution is (`six.py`); others there are build
        // hooks and tooling (`setup.py`, `pdm_build.py`).
        if parts.len() == 1
            && (NOT_MODULES.contains(&parts[0]) || !same_name(parts[0], distribution))
        {
            continue;
        }
        let package = parts.last() == Some(&"__init__");
        let name_parts = if package {
            &parts[..parts.len() - 1]
        } else {
            &parts[..]
        };
        if name_parts.is_empty() {
            continue;
        }
        let name = name_parts.join(".");
        // A stub (`.pyi`) says the API better than its module.
        let stub = path.ends_with(".pyi");
        match names.get(&name) {
            Some((existing, _)) if !stub && existing != path => {}
            _ => {
                names.insert(name, (path.to_owned(), package));
            }
        }
    }
    names
        .into_iter()
        .map(|(name, (path, package))| (path, (name, package)))
        .collect()
}

/// The folder every path starts with (`click-8.1.7/`), or `""`.
fn common_top(paths: &[&str]) -> String {
    let Some(first) = paths.first() else {
        return String::new();
    };
    let Some((top, _)) = first.split_once('/') else {
        return String::new();
    };
    let prefix = format!("{top}/");
    let shared = paths.iter().all(|p| p.starts_with(&prefix));
    // A wheel's top folders are packages themselves; an sdist's one folder
    // is `name-version`, which is no identifier.
    if shared && !is_identifier(top) {
        prefix
    } else {
        String::new()
    }
}

/// Whether a module's name is the distribution's (`typing_extensions`,
/// `typing-extensions`), compared as PyPI compares names.
fn same_name(module: &str, distribution: &str) -> bool {
    crate::package::pypi_normalized(module) == crate::package::pypi_normalized(distribution)
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// The package's public API as pages, one per public module that names
/// any: the modules parsed from `files` (whose names
/// [`module_names`] gave).
pub(super) fn pages(files: Vec<(String, bool, SourceFile)>) -> Vec<Page> {
    let modules: BTreeMap<String, Module> = files
        .into_iter()
        .filter_map(|(name, package, file)| {
            python::read(&name, package, &file.text).map(|m| (name, m))
        })
        .collect();
    let api = Api { modules: &modules };
    // Every public name of every public module, resolved to where it is
    // defined: (defining module, name) -> the public names it has.
    let mut names: HashMap<(String, String), Vec<String>> = HashMap::new();
    for module in modules.values().filter(|m| is_public_module(&m.name)) {
        for public in api.public_names(module) {
            if let Some(defined) = api.resolve(&module.name, &public, 0) {
                names
                    .entry(defined)
                    .or_default()
                    .push(format!("{}.{public}", module.name));
            }
        }
    }
    // Each definition under its shortest name, grouped by that name's
    // module.
    let mut by_module: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
    let mut documented: Vec<((String, String), Vec<String>)> = names.into_iter().collect();
    documented.sort();
    for ((module, name), mut public) in documented {
        public.sort_by_key(|n| (n.matches('.').count(), n.clone()));
        public.dedup();
        let Some(symbol) = modules
            .get(&module)
            .and_then(|m| m.symbols.iter().find(|s| s.name == name))
        else {
            continue;
        };
        if !worth_documenting(symbol) {
            continue;
        }
        let qualified = public[0].clone();
        let home = qualified
            .rsplit_once('.')
            .map_or(String::new(), |(m, _)| m.to_owned());
        let defined_in = (home != module).then(|| module.clone());
        by_module.entry(home).or_default().push(Entry {
            qualified,
            symbol: symbol.clone(),
            defined_in,
            also: public[1..].to_vec(),
        });
    }
    by_module
        .into_iter()
        .map(|(module, mut entries)| {
            entries.sort_by(|a, b| {
                a.symbol
                    .order()
                    .cmp(&b.symbol.order())
                    .then(a.qualified.cmp(&b.qualified))
            });
            let intro = modules.get(&module).and_then(|m| m.doc.clone());
            Page {
                path: format!("{}{}.md", super::PREFIX, module.replace('.', "/")),
                title: format!("{module} API reference"),
                intro,
                entries,
            }
        })
        .collect()
}

/// A module attribute is documented when it says something: a docstring
/// or a type; classes and functions always are.
fn worth_documenting(symbol: &Symbol) -> bool {
    use super::symbol::Kind;
    symbol.kind != Kind::Attribute || symbol.doc.is_some() || symbol.annotated
}

fn is_public_module(name: &str) -> bool {
    name.split('.').all(|part| !part.starts_with('_'))
}

/// The parsed modules, and the rules of what they make public.
struct Api<'m> {
    modules: &'m BTreeMap<String, Module>,
}

impl Api<'_> {
    /// The names `module` makes public: its `__all__`, else its public
    /// definitions and the names it re-exports (a package's imports from
    /// inside the package, or any `import x as x`).
    fn public_names(&self, module: &Module) -> Vec<String> {
        if let Some(all) = &module.all {
            return all.clone();
        }
        let mut names: Vec<String> = module
            .symbols
            .iter()
            .map(|s| s.name.clone())
            .filter(|n| !n.starts_with('_'))
            .collect();
        let top = module.name.split('.').next().unwrap_or("");
        for import in &module.imports {
            let inside = import.module.split('.').next() == Some(top);
            if !import.alias.starts_with('_') && (import.explicit || module.package && inside) {
                names.push(import.alias.clone());
            }
        }
        for star in &module.star_imports {
            if let Some(from) = self.modules.get(star) {
                if star.split('.').next() == Some(top) && module.package {
                    names.extend(self.star_names(from));
                }
            }
        }
        names
    }

    /// What `from m import *` brings: `__all__`, else the public names
    /// `m` defines.
    fn star_names(&self, module: &Module) -> Vec<String> {
        match &module.all {
            Some(all) => all.clone(),
            None => module
                .symbols
                .iter()
                .map(|s| s.name.clone())
                .filter(|n| !n.starts_with('_'))
                .collect(),
        }
    }

    /// Where `name`, as seen from `module`, is defined: a definition of
    /// the package (`None` for a submodule, or a name from elsewhere).
    fn resolve(&self, module: &str, name: &str, hops: usize) -> Option<(String, String)> {
        self.resolve_from(module, name, hops, &mut HashSet::new())
    }

    /// [`Self::resolve`], never asking twice about one name in one module:
    /// modules that star-import each other would otherwise be walked once
    /// per path through them, exponentially many.
    fn resolve_from<'a>(
        &'a self,
        module: &'a str,
        name: &'a str,
        hops: usize,
        asked: &mut HashSet<(&'a str, &'a str)>,
    ) -> Option<(String, String)> {
        if hops > MAX_HOPS || !asked.insert((module, name)) {
            return None;
        }
        let m = self.modules.get(module)?;
        if m.symbols.iter().any(|s| s.name == name) {
            return Some((module.to_owned(), name.to_owned()));
        }
        if let Some(import) = m.imports.iter().find(|i| i.alias == name) {
            return self.resolve_from(&import.module, &import.name, hops + 1, asked);
        }
        m.star_imports
            .iter()
            .find_map(|star| self.resolve_from(star, name, hops + 1, asked))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> (String, String) {
        (path.to_owned(), text.to_owned())
    }

    fn api(files: &[(String, String)]) -> Vec<Page> {
        let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        let names = module_names(&paths, "httpx");
        let parsed = files
            .iter()
            .filter_map(|(path, text)| {
                let (name, package) = names.get(path)?.clone();
                Some((
                    name,
                    package,
                    SourceFile {
                        path: path.clone(),
                        text: text.clone(),
                    },
                ))
            })
            .collect();
        pages(parsed)
    }

    #[test]
    fn modules_are_named_from_their_package_folders() {
        let paths = [
            "httpx-0.27.0/httpx/__init__.py",
            "httpx-0.27.0/httpx/_client.py",
            "httpx-0.27.0/httpx/_transports/__init__.py",
            "httpx-0.27.0/httpx/_transports/default.py",
            "httpx-0.27.0/tests/test_client.py",
            "httpx-0.27.0/setup.py",
            "httpx-0.27.0/scripts/loose/run.py",
            "httpx-0.27.0/docs/conf.py",
        ];
        let names = module_names(&paths, "httpx");
        let mut found: Vec<&str> = names.values().map(|(n, _)| n.as_str()).collect();
        found.sort();
        assert_eq!(
            found,
            [
                "httpx",
                "httpx._client",
                "httpx._transports",
                "httpx._transports.default"
            ]
        );
        let src = module_names(
            &[
                "click-8.1.7/src/click/__init__.py",
                "click-8.1.7/src/click/core.py",
                "click-8.1.7/pdm_build.py",
            ],
            "click",
        );
        assert_eq!(
            src.len(),
            2,
            "a build hook at the top is no module: {src:?}"
        );
        let single = module_names(&["six-1.16.0/six.py", "six-1.16.0/setup.py"], "six");
        assert_eq!(single["six-1.16.0/six.py"].0, "six");
        assert_eq!(single.len(), 1);
        assert_eq!(src["click-8.1.7/src/click/core.py"].0, "click.core");
        assert!(src["click-8.1.7/src/click/__init__.py"].1);
    }

    #[test]
    fn a_private_modules_definition_is_documented_under_its_public_name() {
        let pages = api(&[
            file(
                "httpx-0.27.0/httpx/__init__.py",
                "from ._client import Client\nfrom ._api import get as get\n__all__ = [\"Client\", \"get\"]\n",
            ),
            file(
                "httpx-0.27.0/httpx/_client.py",
                "class Client:\n    \"\"\"An HTTP client.\"\"\"\n    def get(self, url): ...\n",
            ),
            file(
                "httpx-0.27.0/httpx/_api.py",
                "from ._client import Client\ndef get(url, *, params=None):\n    \"\"\"Sends a GET request.\"\"\"\n",
            ),
        ]);
        assert_eq!(pages.len(), 1, "only the public module has a page");
        let page = &pages[0];
        assert_eq!(page.path, "api/httpx.md");
        let named: Vec<(&str, Option<&str>)> = page
            .entries
            .iter()
            .map(|e| (e.qualified.as_str(), e.defined_in.as_deref()))
            .collect();
        assert_eq!(
            named,
            [
                ("httpx.Client", Some("httpx._client")),
                ("httpx.get", Some("httpx._api"))
            ]
        );
    }

    #[test]
    fn a_reexported_name_is_documented_once_under_its_shortest_name() {
        let pages = api(&[
            file("click-8.1/src/click/__init__.py", "from .decorators import option as option\n"),
            file(
                "click-8.1/src/click/decorators.py",
                "def option(*param_decls, **attrs):\n    \"\"\"Attaches an option.\"\"\"\n\ndef _hidden(): ...\n",
            ),
        ]);
        let all: Vec<(&str, &str, Vec<String>)> = pages
            .iter()
            .flat_map(|p| {
                p.entries
                    .iter()
                    .map(move |e| (p.path.as_str(), e.qualified.as_str(), e.also.clone()))
            })
            .collect();
        assert_eq!(
            all,
            [(
                "api/click.md",
                "click.option",
                vec!["click.decorators.option".to_owned()]
            )]
        );
    }
}
