//! Jupyter notebooks (`.ipynb`): what a reader of the notebook reads.
//!
//! Markdown cells are Markdown; code cells become fenced code blocks in the
//! notebook's language, so the chunker keeps each whole and ranking sees
//! the code beside the prose that explains it. Outputs are dropped: they
//! are results (tables of numbers, images as base64, tracebacks), and
//! their bytes would swamp the text a search should match. Raw cells are
//! dropped too. Both nbformat 4 (`cells`) and 3 (`worksheets`, `input`,
//! heading cells) are read.

use serde::Deserialize;

use super::ExtractError;

#[derive(Deserialize)]
struct Notebook {
    #[serde(default)]
    cells: Vec<Cell>,
    #[serde(default)]
    worksheets: Vec<Worksheet>,
    #[serde(default)]
    metadata: Metadata,
}

#[derive(Deserialize, Default)]
struct Metadata {
    language_info: Option<Named>,
    kernelspec: Option<KernelSpec>,
}

#[derive(Deserialize)]
struct Named {
    name: Option<String>,
}

#[derive(Deserialize)]
struct KernelSpec {
    language: Option<String>,
}

#[derive(Deserialize)]
struct Worksheet {
    #[serde(default)]
    cells: Vec<Cell>,
}

#[derive(Deserialize)]
struct Cell {
    cell_type: String,
    /// A cell's text (nbformat 4; 3's Markdown and heading cells).
    source: Option<Source>,
    /// A code cell's text in nbformat 3.
    input: Option<Source>,
    /// A heading cell's level (nbformat 3).
    level: Option<u8>,
    /// A code cell's language (nbformat 3).
    language: Option<String>,
}

/// Cell text as nbformat writes it: one string, or a list of lines.
#[derive(Deserialize)]
#[serde(untagged)]
enum Source {
    Text(String),
    Lines(Vec<String>),
}

impl Source {
    fn text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Lines(lines) => lines.concat(),
        }
    }
}

/// The notebook as one Markdown document.
pub fn to_markdown(bytes: &[u8]) -> Result<String, ExtractError> {
    let notebook: Notebook =
        serde_json::from_slice(bytes).map_err(|e| ExtractError::Notebook(e.to_string()))?;
    let language = notebook
        .metadata
        .language_info
        .and_then(|l| l.name)
        .or_else(|| notebook.metadata.kernelspec.and_then(|k| k.language))
        .unwrap_or_default();
    let cells = notebook
        .cells
        .into_iter()
        .chain(notebook.worksheets.into_iter().flat_map(|w| w.cells));
    let mut out = String::new();
    for cell in cells {
        let text = cell
            .source
            .as_ref()
            .or(cell.input.as_ref())
            .map(Source::text);
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
            continue;
        };
        let block = match cell.cell_type.as_str() {
            "markdown" => text.trim_end().to_owned(),
            "heading" => {
                let level = usize::from(cell.level.unwrap_or(1).clamp(1, 6));
                format!("{} {}", "#".repeat(level), text.trim())
            }
            "code" => super::markdown_out::fence(
                cell.language.as_deref().unwrap_or(&language),
                text.trim_end(),
            ),
            // Raw cells are for a converter, not for a reader.
            _ => continue,
        };
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&block);
    }
    out.push('\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_become_markdown_and_code_blocks_and_outputs_are_dropped() {
        let notebook = serde_json::json!({
            "nbformat": 4,
            "metadata": {"language_info": {"name": "python"}},
            "cells": [
                {"cell_type": "markdown", "source": ["# Fitting a line\n", "\n", "We fit *y* on *x*."]},
                {"cell_type": "code", "source": "import numpy as np\nnp.polyfit(x, y, 1)",
                 "outputs": [{"output_type": "execute_result", "data": {"text/plain": "array([2.0, 1.0])"}}]},
                {"cell_type": "raw", "source": "\\\\newpage"},
                {"cell_type": "code", "source": "print('```')", "outputs": []},
                {"cell_type": "code", "source": "", "outputs": []}
            ]
        });
        let markdown = to_markdown(notebook.to_string().as_bytes()).unwrap();
        assert_eq!(
            markdown,
            "# Fitting a line\n\nWe fit *y* on *x*.\n\n```python\nimport numpy as np\nnp.polyfit(x, y, 1)\n```\n\n````python\nprint('```')\n````\n"
        );
    }

    #[test]
    fn nbformat_3_worksheets_and_heading_cells_are_read() {
        let notebook = serde_json::json!({
            "nbformat": 3,
            "metadata": {},
            "worksheets": [{"cells": [
                {"cell_type": "heading", "level": 2, "source": ["Setup"]},
                {"cell_type": "code", "language": "julia", "input": ["using Plots"], "outputs": []}
            ]}]
        });
        let markdown = to_markdown(notebook.to_string().as_bytes()).unwrap();
        assert_eq!(markdown, "## Setup\n\n```julia\nusing Plots\n```\n");
    }

    #[test]
    fn what_is_not_a_notebook_is_refused_with_the_reason() {
        assert!(matches!(
            to_markdown(b"{not json"),
            Err(ExtractError::Notebook(_))
        ));
        assert!(matches!(
            to_markdown(br#"{"cells": [{"source": "no type"}]}"#),
            Err(ExtractError::Notebook(_))
        ));
    }
}
