//! A PDF's pages without usable text, read by OCR and put back in their
//! places: the glue between extraction (which names those pages) and the
//! OCR tools ([`super::ocr`]), and what the user is told about each page.

use ingest_core::extract::{Extracted, TextLayer};

use super::ocr::{self, Ocr};

/// "page 3", "pages 1–3, 5".
pub(super) fn pages_named(pages: &[u32]) -> String {
    let s = if pages.len() == 1 { "" } else { "s" };
    format!("page{s} {}", ocr::page_list(pages))
}

/// Reads the pages of `doc` that have no usable text by OCR (one file per
/// OCR turn, on a blocking thread, stopped if the job is) and puts what it
/// read in their place. Pages it could not read are named in the file's
/// messages; the file fails only when no page has any text at all.
pub(super) async fn read_by_ocr(
    ocr: &Ocr,
    doc: &mut Extracted,
    pdf: Vec<u8>,
) -> Result<(), String> {
    let pages = doc.pages_without_text();
    if pages.is_empty() {
        return Ok(());
    }
    let span = tracing::info_span!("ocr", file = %doc.file_path, pages = pages.len());
    let Some(turn) = ocr.turn().await else {
        return Err("the server is shutting down".into());
    };
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Dropped with this future (the job cancelled): the OCR stops.
    let _stop_on_drop = crate::process::StopOnDrop(stop.clone());
    let engine = ocr.clone();
    let wanted = pages.clone();
    let reading = tokio::task::spawn_blocking(move || {
        let _turn = turn;
        let _entered = span.enter();
        let started = std::time::Instant::now();
        let reads = engine.read_pages(&pdf, &wanted, &stop);
        tracing::info!(
            secs = started.elapsed().as_secs_f64(),
            "OCR read the file's pages without text"
        );
        reads
    });
    let ocr::Reading { reads, left_out } = match reading.await {
        Ok(Ok(reading)) => reading,
        Ok(Err(err)) => {
            return Err(format!(
                "the PDF's pages without text could not be read by OCR: {err}"
            ))
        }
        Err(join) => return Err(format!("OCR crashed: {join}")),
    };
    let garbled: Vec<u32> = doc
        .pages
        .iter()
        .filter(|p| p.layer == TextLayer::Garbage)
        .map(|p| p.page)
        .collect();
    let ocr::Outcome { texts, unread } = ocr::Outcome::of(reads);
    let read: Vec<u32> = texts.keys().copied().collect();
    doc.replace_pages(&texts);
    if !read.is_empty() {
        doc.warnings.push(format!(
            "{} had no usable text layer and {} read by OCR",
            pages_named(&read),
            if read.len() == 1 { "was" } else { "were" }
        ));
    }
    for left in &left_out {
        doc.warnings.push(format!(
            "{} left out: {}",
            pages_named(&left.pages),
            left.why
        ));
    }
    for (page, error) in &unread {
        let why = match error {
            Some(error) => format!("it could not be read by OCR: {error}"),
            None => "OCR found no text on it".to_owned(),
        };
        if garbled.contains(page) {
            doc.warnings
                .push(format!("page {page} keeps its garbled text layer: {why}"));
        } else {
            doc.warnings
                .push(format!("page {page} is not indexed: {why}"));
        }
    }
    if doc.text.trim().is_empty() {
        let first_error = unread
            .iter()
            .find_map(|(page, error)| Some(format!(" (page {page}: {})", error.as_ref()?)))
            .or_else(|| {
                let left = left_out.first()?;
                Some(format!(
                    " ({} left out: {})",
                    pages_named(&left.pages),
                    left.why
                ))
            })
            .unwrap_or_default();
        // "Found no text" only where OCR looked and saw none; a page it
        // could not render or read is not a page without text.
        let outcome = if unread.iter().any(|(_, error)| error.is_none()) {
            "OCR found no text on"
        } else {
            "OCR could not read"
        };
        return Err(format!(
            "the PDF has no text layer, and {outcome} its {}{first_error}",
            pages_named(&pages)
        ));
    }
    Ok(())
}
