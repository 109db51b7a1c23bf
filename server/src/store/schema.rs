//! The `chunks` table: its columns, and the conversions to and from Arrow.

use std::sync::Arc;

use arrow_array::types::Float32Type;
use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, RecordBatch, StringArray, TimestampMicrosecondArray,
    UInt32Array,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef, TimeUnit};
use ingest_core::chunk::Chunk;

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
        // own (see `ingest_core::context`). `text` stays the bare text.
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
        // The one field the keyword leg's full-text index sees: the context
        // and the text (see [`search_text`]). After the others, because a
        // store written before it existed gets it appended (see `Store::open`).
        Field::new(SEARCH_TEXT, DataType::Utf8, false),
        // Last for the same reason; empty in rows written before it existed.
        Field::new(INPUT_HASH, DataType::Utf8, true),
    ]))
}

/// The column that names what a row's vector was embedded from: the
/// SHA-256 of [`ingest_core::context::embedding_input`] of its context and
/// text (see [`input_hash`]). A chunk with the same input anywhere in the
/// store, in any library, version or page, reuses that row's vector instead
/// of running the model again.
pub const INPUT_HASH: &str = "input_hash";

/// [`INPUT_HASH`] of one embedding input.
pub fn input_hash(input: &str) -> String {
    ingest_core::ids::content_hash(input.as_bytes())
}

/// The column the full-text index covers.
pub const SEARCH_TEXT: &str = "search_text";

/// [`search_text`] as SQL over a row's columns: how a store written
/// before the column existed fills it in.
pub const SEARCH_TEXT_SQL: &str = "concat(context, ' ', text)";

/// What the keyword leg searches for a chunk: its context (title, headings)
/// and its text as one field. Why one field and not BM25F over two: LanceDB
/// walks each field's postings, so two fields cost two searches (the
/// keyword leg took nearly twice as long on the 100k bench), and the two
/// rank alike (the context's weight at 1, which was the best of 1, 2, 3 and
/// 5; docs/benchmarks.md, "Searches answer from memory").
pub fn search_text(context: &str, text: &str) -> String {
    format!("{context} {text}")
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
    /// Its context line ([`ingest_core::context::chunk_context`]).
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
            Arc::new(StringArray::from_iter_values(
                doc.chunks
                    .iter()
                    .map(|r| search_text(&r.context, &r.chunk.text)),
            )),
            Arc::new(StringArray::from_iter_values(doc.chunks.iter().map(|r| {
                input_hash(&ingest_core::context::embedding_input(
                    &r.context,
                    &r.chunk.text,
                ))
            }))),
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
        let columns = ChunkColumns::of(batch)?;
        out.extend((0..columns.len()).map(|row| columns.chunk(row)));
    }
    Ok(out)
}

/// The [`STORED_COLUMNS`] of one query result batch, typed, so that single
/// chunks are read from it without looking a column up again. Arrow
/// arrays share their buffers: holding these keeps a batch's text in a few
/// large allocations (the in-memory copy holds the table this way).
#[derive(Debug, Clone)]
pub struct ChunkColumns {
    id: StringArray,
    library: StringArray,
    version: StringArray,
    path: StringArray,
    title: StringArray,
    heading: StringArray,
    /// A v1 table (read only to upgrade it) has no context column.
    context: Option<StringArray>,
    text: StringArray,
    created: TimestampMicrosecondArray,
    index: UInt32Array,
    doc_chunks: UInt32Array,
    page: UInt32Array,
    start: UInt32Array,
    end: UInt32Array,
}

impl ChunkColumns {
    /// The columns of `batch`, which must hold [`STORED_COLUMNS`].
    pub fn of(batch: &RecordBatch) -> Result<Self, String> {
        let s = |name: &str| {
            batch
                .column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                .cloned()
                .ok_or_else(|| format!("{name} is not a string column"))
        };
        let u = |name: &str| {
            batch
                .column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<UInt32Array>())
                .cloned()
                .ok_or_else(|| format!("{name} is not a u32 column"))
        };
        Ok(Self {
            id: s("chunk_id")?,
            library: s("library")?,
            version: s("version")?,
            path: s("file_path")?,
            title: s("title")?,
            heading: s("heading_path")?,
            context: s("context").ok(),
            text: s("text")?,
            created: batch
                .column_by_name("created_at")
                .and_then(|c| c.as_any().downcast_ref::<TimestampMicrosecondArray>())
                .cloned()
                .ok_or_else(|| "created_at is not a timestamp column".to_owned())?,
            index: u("chunk_index")?,
            doc_chunks: u("doc_chunks")?,
            page: u("page")?,
            start: u("span_start")?,
            end: u("span_end")?,
        })
    }

    /// How many rows the batch holds.
    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// Whether the batch holds no row.
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }

    /// The [`STORED_COLUMNS`] of `batch` in buffers of their own. The arrays
    /// of a batch read from LanceDB share the buffers the batch was decoded
    /// into (the vectors', among others) and the text's buffer is decoded
    /// several times larger than the text: copied out, the 100k-chunk bench
    /// table held about a quarter of the memory it held as read
    /// (docs/benchmarks.md, "Searches answer from memory").
    pub fn copied_out(batch: &RecordBatch) -> Result<Self, String> {
        let schema = batch.schema();
        let stored: Vec<usize> = STORED_COLUMNS
            .iter()
            .filter_map(|name| schema.index_of(name).ok())
            .collect();
        let every_row = UInt32Array::from_iter_values(0..batch.num_rows() as u32);
        let copy = batch
            .project(&stored)
            .and_then(|columns| arrow_select::take::take_record_batch(&columns, &every_row))
            .map_err(|e| e.to_string())?;
        Self::of(&copy)
    }

    /// Bytes of the arrays' buffers (shared buffers counted once per array).
    pub fn buffer_bytes(&self) -> usize {
        let arrays: [&dyn Array; 13] = [
            &self.id,
            &self.library,
            &self.version,
            &self.path,
            &self.title,
            &self.heading,
            &self.text,
            &self.created,
            &self.index,
            &self.doc_chunks,
            &self.page,
            &self.start,
            &self.end,
        ];
        let context = self
            .context
            .as_ref()
            .map_or(0, |a| a.get_buffer_memory_size());
        context
            + arrays
                .iter()
                .map(|a| a.get_buffer_memory_size())
                .sum::<usize>()
    }

    /// Row `row`'s library.
    pub fn library(&self, row: usize) -> &str {
        self.library.value(row)
    }

    /// Row `row`'s version.
    pub fn version(&self, row: usize) -> &str {
        self.version.value(row)
    }

    /// Row `row`'s file path.
    pub fn file_path(&self, row: usize) -> &str {
        self.path.value(row)
    }

    /// Row `row`'s place in its document.
    pub fn chunk_index(&self, row: usize) -> u32 {
        self.index.value(row)
    }

    /// Row `row`'s chunk id.
    pub fn chunk_id(&self, row: usize) -> &str {
        self.id.value(row)
    }

    /// When row `row` was written, in microseconds since the epoch.
    pub fn created_at_micros(&self, row: usize) -> i64 {
        self.created.value(row)
    }

    /// Row `row`'s context ("" in a v1 table, which has none).
    pub fn context(&self, row: usize) -> &str {
        self.context.as_ref().map_or("", |c| c.value(row))
    }

    /// Row `row`'s text.
    pub fn text(&self, row: usize) -> &str {
        self.text.value(row)
    }

    /// Row `row` as a stored chunk.
    pub fn chunk(&self, row: usize) -> StoredChunk {
        StoredChunk {
            chunk_id: self.id.value(row).to_owned(),
            library: self.library.value(row).to_owned(),
            version: self.version.value(row).to_owned(),
            file_path: self.path.value(row).to_owned(),
            title: (!self.title.is_null(row)).then(|| self.title.value(row).to_owned()),
            chunk_index: self.index.value(row),
            doc_chunks: self.doc_chunks.value(row),
            heading_path: self.heading.value(row).to_owned(),
            context: self
                .context
                .as_ref()
                .map_or_else(String::new, |c| c.value(row).to_owned()),
            page: (!self.page.is_null(row)).then(|| self.page.value(row)),
            span_start: self.start.value(row),
            span_end: self.end.value(row),
            text: self.text.value(row).to_owned(),
            created_at_micros: self.created.value(row),
        }
    }
}
