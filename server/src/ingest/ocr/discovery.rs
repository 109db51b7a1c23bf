//! Whether this server reads pages by OCR: `tesseract` and `pdftoppm`
//! found on `PATH`, and Tesseract's data for every language asked for; and
//! what the status page and a file's messages say when it does not.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::{Ocr, OcrError, OcrSettings};
use crate::process::{on_path, run_within, Bounds};

/// Whether this server reads pages by OCR.
#[derive(Debug, Clone)]
pub enum OcrStatus {
    Ready(Ocr),
    /// Turned off (`--ocr false`).
    Off,
    /// A tool or a language's data is not installed: what is missing.
    Missing(String),
}

impl OcrStatus {
    /// Finds `tesseract` and `pdftoppm` on `PATH` and checks that
    /// Tesseract has every language asked for. `None` settings: off.
    /// Blocks for as long as `tesseract --list-langs` takes (bounded).
    pub fn detect(settings: Option<OcrSettings>) -> Self {
        let Some(settings) = settings else {
            return Self::Off;
        };
        let (Some(tesseract), Some(pdftoppm)) = (on_path("tesseract"), on_path("pdftoppm")) else {
            let missing = [
                ("tesseract", "tesseract-ocr"),
                ("pdftoppm", "poppler-utils"),
            ]
            .into_iter()
            .filter(|(tool, _)| on_path(tool).is_none())
            .map(|(tool, package)| format!("{tool} (Debian: {package})"))
            .collect::<Vec<_>>();
            return Self::Missing(format!("not installed: {}", missing.join(", ")));
        };
        let installed = match list_languages(&tesseract, &settings) {
            Ok(installed) => installed,
            Err(err) => return Self::Missing(format!("tesseract does not run: {err}")),
        };
        let absent: Vec<&str> = settings
            .languages
            .split('+')
            .filter(|l| !installed.iter().any(|i| i == l))
            .collect();
        if !absent.is_empty() {
            let packages: Vec<String> = absent
                .iter()
                .map(|l| format!("tesseract-ocr-{}", l.replace('_', "-").to_lowercase()))
                .collect();
            return Self::Missing(format!(
                "tesseract has no data for {} (Debian: {})",
                absent.join(", "),
                packages.join(", ")
            ));
        }
        Self::Ready(Ocr::new(tesseract, pdftoppm, settings))
    }

    /// The OCR engine, when it is ready.
    pub fn ready(&self) -> Option<&Ocr> {
        match self {
            Self::Ready(ocr) => Some(ocr),
            Self::Off | Self::Missing(_) => None,
        }
    }

    /// What the status API says of OCR.
    pub fn info(&self) -> index_core::OcrInfo {
        match self {
            Self::Ready(ocr) => index_core::OcrInfo {
                enabled: true,
                languages: Some(ocr.settings.languages.clone()),
                why_off: None,
            },
            Self::Off => index_core::OcrInfo {
                enabled: false,
                languages: None,
                why_off: Some("turned off (--ocr false)".into()),
            },
            Self::Missing(why) => index_core::OcrInfo {
                enabled: false,
                languages: None,
                why_off: Some(format!(
                    "{why}; install the Debian packages tesseract-ocr, tesseract-ocr-eng and \
                     poppler-utils (`make setup` does)"
                )),
            },
        }
    }

    /// What a user is told about a PDF (or pages) without text that OCR
    /// did not read: why, and what would change that.
    pub fn hint(&self) -> String {
        match self {
            Self::Ready(_) => "OCR reads scanned PDFs uploaded on their own, not inside an archive: upload it alone".into(),
            Self::Off => "OCR, which would read it, is turned off on this server (--ocr false)".into(),
            Self::Missing(why) => format!(
                "OCR would read it once tesseract is installed on the server (Debian packages \
                 tesseract-ocr, tesseract-ocr-eng and poppler-utils; `make setup` installs them): {why}"
            ),
        }
    }
}

/// The languages Tesseract has data for (`tesseract --list-langs`).
fn list_languages(tesseract: &Path, settings: &OcrSettings) -> Result<Vec<String>, OcrError> {
    let mut command = Command::new(tesseract);
    command.arg("--list-langs");
    // Its list goes to stdout: into a file, read afterwards.
    let dir = tempfile::Builder::new().prefix("docshelf-ocr-").tempdir()?;
    let listed = dir.path().join("langs");
    let stdout = Stdio::from(std::fs::File::create(&listed)?);
    let bounds = Bounds {
        cpu: Duration::from_secs(10),
        wall: Duration::from_secs(30),
        memory_bytes: settings.memory_bytes,
        file_bytes: None,
    };
    run_within(
        "tesseract",
        &mut command,
        stdout,
        &bounds,
        &AtomicBool::new(false),
    )?;
    let listed = std::fs::read_to_string(&listed)?;
    Ok(listed
        .lines()
        .skip_while(|l| !l.starts_with("List of available languages"))
        .skip(1)
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect())
}
