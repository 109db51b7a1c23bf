//! The `chunks` table: its columns, and the conversions to and from Arrow.

use std::sync::Arc;

use arrow_array::types::Float32Type;
use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, RecordBatch, StringArray, TimestampMicrosecondArray,
    UInt32Array,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef, TimeUnit};
use index_core::chunk::Chunk;

use crate::embed::DIM;

/// Columns read back for a stored chunk (everything but the vector).
pub const STORED_COLUMNS: &[&str] = &[
    "chunk_id",
    "library",
    "version",
    "file_path",
    "title",
    "chunk_index",
    "doc_chunks",
    "heading_path",
    "context",
    "page",
    "span_start",
    "span_end",
    "text",
    "created_at",
];

/// The table's schema.
pub fn chunk_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("chunk_id", DataType::Utf8, false),
        Field::new("library", DataType::Utf8, false),
        Field::new("version", DataType::Utf8, false),
        Field::new("file_path", DataType::Utf8, false),
        Field::new("title", DataType::Utf8, true),
        Field::new("chunk_index", DataType::UInt32, false),
        // How many chunks the document was written with: lets anyone check
        // that a document is whole.
        Field::new("doc_chunks", DataType::UInt32, false),
        Field::new("heading_path", DataType::Utf8, false),
        // The title, headings and (first chunk) description the chunk was
        // embedded with and that the keyword index sees as a field of its
        // own (see `index_core::context`). `text` stays the bare text.
        Field::new("context", DataType::Utf8, false),
        Field::new("page", DataType::UInt32, true),
        Field::new("span_start", DataType::UInt32, false),
        Field::new("span_end", DataType::UInt32, false),
        Field::new("text", DataType::Utf8, false),
        Field::new(
            "created_at",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new(
            "vector",
            DataType::FixedSizeList(
                Arc::new(Field::new("item", DataType::Float32, true)),
                DIM as i32,
            ),
            false,
        ),
    ]))
}

/// A document ready to store: its chunks, each with its vector and id.
#[derive(Debug, Clone)]
pub struct DocumentChunks {
    pub library: String,
    pub version: String,
    pub file_path: String,
    pub title: Option<String>,
    /// When the document was stored, in microseconds since the Unix epoch.
    pub created_at_micros: i64,
    pub chunks: Vec<ChunkRow>,
}

/// One chunk ready to store.
#[derive(Debug, Clone)]
pub struct ChunkRow {
    pub id: String,
    pub chunk: Chunk,
    /// Its context line ([`index_core::context::chunk_context`]).
    pub context: String,
    /// The embedding of the context and text together.
    pub vector: Vec<f32>,
}

/// A chunk as read back from the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredChunk {
    pub chunk_id: String,
    pub library: String,
    pub version: String,
    pub file_path: String,
    pub title: Option<String>,
    pub chunk_index: u32,
    pub doc_chunks: u32,
    pub heading_path: String,
    pub context: String,
    pub page: Option<u32>,
    pub span_start: u32,
    pub span_end: u32,
    pub text: String,
    /// When the chunk was stored, in microseconds since the Unix epoch.
    pub created_at_micros: i64,
}

impl StoredChunk {
    /// The chunk as document reassembly needs it.
    pub fn piece(&self) -> index_core::document::Piece<'_> {
        index_core::document::Piece {
            index: self.chunk_index,
            start: self.span_start as usize,
            end: self.span_end as usize,
            text: &self.text,
        }
    }
}

/// One document as one record batch.
pub fn to_batch(doc: &DocumentChunks) -> Result<RecordBatch, ArrowError> {
    let n = doc.chunks.len();
    let repeat = |s: &str| Arc::new(StringArray::from(vec![s; n])) as ArrayRef;
    let u32s = |f: &dyn Fn(&Chunk) -> u32| {
        Arc::new(UInt32Array::from_iter_values(
            doc.chunks.iter().map(|r| f(&r.chunk)),
        )) as ArrayRef
    };
    let vectors = FixedSizeListArray::from_iter_primitive::<Float32Type, _, _>(
        doc.chunks
            .iter()
            .map(|r| Some(r.vector.iter().copied().map(Some).collect::<Vec<_>>())),
        DIM as i32,
    );
    let doc_chunks = u32::try_from(n).unwrap_or(u32::MAX);
    RecordBatch::try_new(
        chunk_schema(),
        vec![
            Arc::new(StringArray::from_iter_values(
                doc.chunks.iter().map(|r| r.id.as_str()),
            )),
            repeat(&doc.library),
            repeat(&doc.version),
            repeat(&doc.file_path),
            Arc::new(StringArray::from(vec![doc.title.as_deref(); n])),
            u32s(&|c| c.index as u32),
            Arc::new(UInt32Array::from(vec![doc_chunks; n])),
            Arc::new(StringArray::from_iter_values(
                doc.chunks.iter().map(|r| r.chunk.heading_path_display()),
            )),
            Arc::new(StringArray::from_iter_values(
                doc.chunks.iter().map(|r| r.context.as_str()),
            )),
            Arc::new(UInt32Array::from_iter(
                doc.chunks.iter().map(|r| r.chunk.page),
            )),
            u32s(&|c| c.start as u32),
            u32s(&|c| c.end as u32),
            Arc::new(StringArray::from_iter_values(
                doc.chunks.iter().map(|r| r.chunk.text.as_str()),
            )),
            Arc::new(
                TimestampMicrosecondArray::from(vec![doc.created_at_micros; n])
                    .with_timezone("UTC"),
            ),
            Arc::new(vectors),
        ],
    )
}

/// The `vector` column of query results that selected it, one `Vec` a row.
pub fn vectors_from_batches(batches: &[RecordBatch]) -> Result<Vec<Vec<f32>>, String> {
    let mut out = Vec::new();
    for batch in batches {
        let lists = batch
            .column_by_name("vector")
            .and_then(|c| c.as_any().downcast_ref::<FixedSizeListArray>())
            .ok_or("vector is not a fixed-size list")?;
        let values = lists
            .values()
            .as_any()
            .downcast_ref::<arrow_array::Float32Array>()
            .ok_or("vector items are not f32")?;
        let width = lists.value_length() as usize;
        for row in 0..lists.len() {
            let start = lists.value_offset(row) as usize;
            out.push(values.values()[start..start + width].to_vec());
        }
    }
    Ok(out)
}

/// Stored chunks from query results selecting [`STORED_COLUMNS`].
pub fn from_batches(batches: &[RecordBatch]) -> Result<Vec<StoredChunk>, String> {
    let mut out = Vec::new();
    for batch in batches {
        let s = |name: &str| {
            batch
                .column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                .ok_or_else(|| format!("{name} is not a string column"))
        };
        let u = |name: &str| {
            batch
                .column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<UInt32Array>())
                .ok_or_else(|| format!("{name} is not a u32 column"))
        };
        let (id, library, version, path, title) = (
            s("chunk_id")?,
            s("library")?,
            s("version")?,
            s("file_path")?,
            s("title")?,
        );
        let (heading, text) = (s("heading_path")?, s("text")?);
        // A v1 table (read only to upgrade it) has no context column.
        let context = s("context").ok();
        let created = batch
            .column_by_name("created_at")
            .and_then(|c| c.as_any().downcast_ref::<TimestampMicrosecondArray>())
            .ok_or_else(|| "created_at is not a timestamp column".to_owned())?;
        let (index, doc_chunks, page, start, end) = (
            u("chunk_index")?,
            u("doc_chunks")?,
            u("page")?,
            u("span_start")?,
            u("span_end")?,
        );
        for row in 0..batch.num_rows() {
            out.push(StoredChunk {
                chunk_id: id.value(row).to_owned(),
                library: library.value(row).to_owned(),
                version: version.value(row).to_owned(),
                file_path: path.value(row).to_owned(),
                title: (!title.is_null(row)).then(|| title.value(row).to_owned()),
                chunk_index: index.value(row),
                doc_chunks: doc_chunks.value(row),
                heading_path: heading.value(row).to_owned(),
                context: context.map_or_else(String::new, |c| c.value(row).to_owned()),
                page: (!page.is_null(row)).then(|| page.value(row)),
                span_start: start.value(row),
                span_end: end.value(row),
                text: text.value(row).to_owned(),
                created_at_micros: created.value(row),
            });
        }
    }
    Ok(out)
}
