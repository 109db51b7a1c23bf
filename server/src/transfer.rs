//! The export format: one library version's chunks with their vectors, so
//! that another server takes them in without embedding them again.
//!
//! A file is one line of JSON, the [`Header`], then the rows as an Arrow IPC
//! stream in the chunk table's own schema (vectors as 384 `f32`s). The
//! header names the format, the embedding model, the library version and
//! its counts, and the SHA-256 of the stream that follows: an import reads
//! the header, refuses another model before reading further, and refuses a
//! stream cut short or altered before anything is written.
//!
//! Why Arrow IPC: the rows are Arrow already as LanceDB reads them, the
//! vectors stay binary (a JSON vector is three times larger and lossy
//! unless printed in full), and the stream is read back by the same crate.

use arrow_array::RecordBatch;
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::store::schema;

/// What the first line of a file says.
pub const FORMAT: &str = "docshelf-version-export/1";

/// Longest header read: a header is a few hundred bytes.
const MAX_HEADER: usize = 64 * 1024;

/// The first line of an export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// [`FORMAT`].
    pub format: String,
    /// The embedding model the vectors came from, and their width.
    pub model: String,
    pub dimensions: usize,
    pub library: String,
    pub version: String,
    pub documents: u64,
    pub chunks: u64,
    /// Hex SHA-256 of the Arrow IPC stream after the header line.
    pub sha256: String,
}

/// Why a file cannot be imported.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("not a docshelf export: {0}")]
    NotAnExport(String),
    #[error("the export was made by docshelf's format {found:?}; this server reads {FORMAT:?}")]
    OtherFormat { found: String },
    #[error("the export's vectors come from the model {found} ({found_dimensions} dimensions); this server embeds with {ours} ({ours_dimensions}): its vectors cannot be searched here. Upload the documents instead, or import into a server that runs {found}")]
    OtherModel {
        found: String,
        found_dimensions: usize,
        ours: String,
        ours_dimensions: usize,
    },
    #[error("the export is damaged: its rows' SHA-256 is {found}, its header says {expected} (cut short or altered)")]
    Checksum { expected: String, found: String },
    #[error("the export's rows do not read: {0}")]
    Rows(String),
    #[error("the export's rows do not match its header: {0}")]
    Mismatch(String),
}

/// Writes `batches` (rows of the chunk table, vectors included) as an
/// export of `header`'s library version; fills in the header's checksum.
pub fn write(mut header: Header, batches: &[RecordBatch]) -> Result<Vec<u8>, TransferError> {
    let schema = schema::chunk_schema();
    let mut stream = Vec::new();
    {
        let mut writer = StreamWriter::try_new(&mut stream, &schema)
            .map_err(|e| TransferError::Rows(e.to_string()))?;
        for batch in batches {
            writer
                .write(batch)
                .map_err(|e| TransferError::Rows(e.to_string()))?;
        }
        writer
            .finish()
            .map_err(|e| TransferError::Rows(e.to_string()))?;
    }
    header.format = FORMAT.to_owned();
    header.sha256 = hex(&Sha256::digest(&stream));
    let mut out = serde_json::to_vec(&header).map_err(|e| TransferError::Rows(e.to_string()))?;
    out.push(b'\n');
    out.extend_from_slice(&stream);
    Ok(out)
}

/// The header of an export, and the rest of it unread.
pub fn header(bytes: &[u8]) -> Result<(Header, &[u8]), TransferError> {
    let Some(end) = bytes.iter().take(MAX_HEADER).position(|&b| b == b'\n') else {
        return Err(TransferError::NotAnExport(
            "it does not start with a header line".into(),
        ));
    };
    let header: Header = serde_json::from_slice(&bytes[..end])
        .map_err(|e| TransferError::NotAnExport(format!("its header does not read ({e})")))?;
    if header.format != FORMAT {
        return Err(TransferError::OtherFormat {
            found: header.format,
        });
    }
    Ok((header, &bytes[end + 1..]))
}

/// The rows of an export whose `header` was read, once their checksum
/// and counts match it.
pub fn rows(header: &Header, stream: &[u8]) -> Result<Vec<RecordBatch>, TransferError> {
    let found = hex(&Sha256::digest(stream));
    if found != header.sha256 {
        return Err(TransferError::Checksum {
            expected: header.sha256.clone(),
            found,
        });
    }
    let reader =
        StreamReader::try_new(stream, None).map_err(|e| TransferError::Rows(e.to_string()))?;
    if reader.schema().fields() != schema::chunk_schema().fields() {
        return Err(TransferError::Mismatch(
            "its columns are not the chunk table's".into(),
        ));
    }
    let batches: Vec<RecordBatch> = reader
        .collect::<Result<_, _>>()
        .map_err(|e| TransferError::Rows(e.to_string()))?;
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if rows == 0 {
        // Imported, it would delete the version it names.
        return Err(TransferError::Mismatch("it holds no chunks".into()));
    }
    if rows as u64 != header.chunks {
        return Err(TransferError::Mismatch(format!(
            "{rows} rows, the header says {}",
            header.chunks
        )));
    }
    for batch in &batches {
        for column in ["library", "version"] {
            let values = crate::store::string_column(batch, column)
                .map_err(|e| TransferError::Rows(e.to_string()))?;
            let expected = if column == "library" {
                &header.library
            } else {
                &header.version
            };
            if values.iter().any(|v| v != Some(expected.as_str())) {
                return Err(TransferError::Mismatch(format!(
                    "a row's {column} is not {expected:?}"
                )));
            }
        }
    }
    Ok(batches)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
