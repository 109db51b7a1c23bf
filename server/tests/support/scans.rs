//! Scanned PDFs made from real ones, for the OCR tests and `make bench-ocr`:
//! each page of a PDF rendered to a grey image (Poppler's `pdftoppm`) and
//! the images put back into a PDF with no text layer (`img2pdf`), as a
//! scanner would; the original's text layer (`pdftotext`) to score what OCR
//! reads against, by word recall.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// The tools these scans and the OCR itself need, with the Debian package
/// of each.
const TOOLS: [(&str, &str, &str); 4] = [
    ("tesseract", "--version", "tesseract-ocr, tesseract-ocr-eng"),
    ("pdftoppm", "-v", "poppler-utils"),
    ("pdftotext", "-v", "poppler-utils"),
    ("img2pdf", "--version", "img2pdf"),
];

/// Panics, saying what to install, unless every tool is there: OCR tests
/// must not pass by doing nothing on a machine without them.
pub fn require_tools() {
    let missing: Vec<String> = TOOLS
        .iter()
        .filter(|(tool, flag, _)| {
            Command::new(tool)
                .arg(flag)
                .output()
                .map_or(true, |o| !o.status.success())
        })
        .map(|(tool, _, package)| format!("{tool} (Debian: {package})"))
        .collect();
    assert!(
        missing.is_empty(),
        "the OCR tests need {}: `make test` (scripts/setup.sh) installs them",
        missing.join(", ")
    );
}

fn run(command: &mut Command) -> Vec<u8> {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// `source`'s pages `pages` (all when `None`), scanned at `dpi` into an
/// image-only PDF written in `work` (a directory of its own).
pub fn scan(source: &Path, pages: Option<(u32, u32)>, dpi: u32, work: &Path) -> Vec<u8> {
    std::fs::create_dir_all(work).expect("scan directory");
    let mut render = Command::new("pdftoppm");
    render.args(["-r", &dpi.to_string(), "-gray", "-png"]);
    if let Some((first, last)) = pages {
        render.args(["-f", &first.to_string(), "-l", &last.to_string()]);
    }
    run(render.arg(source).arg(work.join("page")));
    // pdftoppm pads page numbers to one width: names sort in page order.
    let mut images: Vec<_> = std::fs::read_dir(work)
        .expect("scan directory")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    images.sort();
    assert!(
        !images.is_empty(),
        "pdftoppm rendered no page of {source:?}"
    );
    let pdf = work.join("scan.pdf");
    run(Command::new("img2pdf").args(&images).arg("-o").arg(&pdf));
    for image in images {
        let _ = std::fs::remove_file(image);
    }
    std::fs::read(&pdf).expect("the scan")
}

/// Damages the image of page `page` (1-based) of a scan made by [`scan`]:
/// the start of its compressed data is overwritten, so it cannot be
/// decoded, and the file's layout (every offset) stays as it was.
pub fn damage_page_image(pdf: &mut [u8], page: usize) {
    let marker = b"/Subtype /Image";
    let at = pdf
        .windows(marker.len())
        .enumerate()
        .filter(|(_, w)| *w == marker)
        .map(|(i, _)| i)
        .nth(page - 1)
        .unwrap_or_else(|| panic!("the scan has no image for page {page}"));
    let stream = at + find(&pdf[at..], b"stream").expect("the image's stream") + b"stream".len();
    let data = stream + find(&pdf[stream..], b"\n").expect("the stream's start") + 1;
    for byte in &mut pdf[data..data + 64] {
        *byte = b'Z';
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The words of `source`'s text layer, as Poppler reads it.
pub fn text_layer(source: &Path) -> String {
    String::from_utf8_lossy(&run(Command::new("pdftotext")
        .args(["-enc", "UTF-8"])
        .arg(source)
        .arg("-")))
    .into_owned()
}

/// `text`'s words, lower-cased, letters and digits only; words hyphenated
/// across lines joined.
pub fn words(text: &str) -> Vec<String> {
    let mut joined = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '-' && chars.peek() == Some(&'\n') {
            chars.next();
            continue;
        }
        joined.push(c);
    }
    joined
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The share of `reference`'s words (counted with repeats) that `read`
/// has too.
pub fn recall(reference: &[String], read: &[String]) -> f64 {
    assert!(
        !reference.is_empty(),
        "an empty reference would give any reading full recall"
    );
    let mut left: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for w in read {
        *left.entry(w.as_str()).or_default() += 1;
    }
    let found = reference
        .iter()
        .filter(|w| match left.get_mut(w.as_str()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        })
        .count();
    if reference.is_empty() {
        1.0
    } else {
        found as f64 / reference.len() as f64
    }
}
