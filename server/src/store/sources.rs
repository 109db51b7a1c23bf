//! Documentation sources (crawled sites, registry packages), kept so that
//! any process on the store can list and refresh them: one row per
//! source, its request and its state (what the last fetch found, page by
//! page) as JSON the source module reads. The store only keeps them.

use std::sync::Arc;

use arrow_array::{RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::{
    filter::sql_string, first_row, now_micros, string_column, timestamp_field, upsert_row,
};
use super::{Store, StoreError, Target};

/// The table sources live in.
pub(super) const SOURCES: &str = "sources";

pub(super) fn sources_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("source_id", DataType::Utf8, false),
        Field::new("library", DataType::Utf8, false),
        Field::new("version", DataType::Utf8, false),
        // What was asked (JSON).
        Field::new("request", DataType::Utf8, false),
        // What the last fetch found (JSON).
        Field::new("state", DataType::Utf8, false),
        timestamp_field("updated_at"),
    ]))
}

/// A source as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSource {
    pub id: String,
    pub library: String,
    pub version: String,
    pub request: String,
    pub state: String,
}

const COLUMNS: [&str; 5] = ["source_id", "library", "version", "request", "state"];

impl Store {
    /// Writes (or replaces) a source: one commit.
    #[tracing::instrument(skip_all, fields(source = %source.id))]
    pub async fn save_source(&self, source: &StoredSource) -> Result<(), StoreError> {
        let batch = RecordBatch::try_new(
            sources_schema(),
            vec![
                Arc::new(StringArray::from(vec![source.id.as_str()])),
                Arc::new(StringArray::from(vec![source.library.as_str()])),
                Arc::new(StringArray::from(vec![source.version.as_str()])),
                Arc::new(StringArray::from(vec![source.request.as_str()])),
                Arc::new(StringArray::from(vec![source.state.as_str()])),
                Arc::new(TimestampMicrosecondArray::from(vec![now_micros()]).with_timezone("UTC")),
            ],
        )
        .map_err(|e| StoreError::Shape(e.to_string()))?;
        let _writer = self.write.acquire().await?;
        upsert_row(&self.sources, "source_id", batch).await
    }

    /// One source, if it exists.
    pub async fn source(&self, id: &str) -> Result<Option<StoredSource>, StoreError> {
        self.sources.checkout_latest().await?;
        let filter = format!("source_id = {}", sql_string(id));
        match first_row(&self.sources, filter, &COLUMNS).await? {
            Some(row) => Ok(read(&row)?.pop()),
            None => Ok(None),
        }
    }

    /// Every source, in the order of their ids.
    pub async fn sources(&self) -> Result<Vec<StoredSource>, StoreError> {
        let batches = super::all_rows(&self.sources, &COLUMNS).await?;
        let mut all = Vec::new();
        for batch in &batches {
            all.extend(read(batch)?);
        }
        all.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(all)
    }

    /// Forgets the sources of a deleted library or version (called by
    /// [`Store::delete`] under the write lock): a deleted version must not
    /// come back at its next scheduled refresh. Says how many there were.
    pub(super) async fn forget_sources(&self, target: &Target<'_>) -> Result<u64, StoreError> {
        let Some(sql) = super::catalog::versions_sql(target) else {
            return Ok(0);
        };
        let count = self.sources_filling(target).await?;
        if count > 0 {
            self.sources.delete(&sql).await?;
        }
        Ok(count)
    }

    /// How many sources fill `target` (a library or a version).
    pub async fn sources_filling(&self, target: &Target<'_>) -> Result<u64, StoreError> {
        let (library, version) = match *target {
            Target::Library(l) => (l, None),
            Target::Version(l, v) => (l, Some(v)),
            Target::Document(..) => return Ok(0),
        };
        let all = self.sources().await?;
        Ok(all
            .iter()
            .filter(|s| s.library == library && version.is_none_or(|v| s.version == v))
            .count() as u64)
    }
}

fn read(batch: &RecordBatch) -> Result<Vec<StoredSource>, StoreError> {
    let [id, library, version, request, state] = COLUMNS.map(|c| string_column(batch, c));
    let (id, library, version, request, state) = (id?, library?, version?, request?, state?);
    Ok((0..batch.num_rows())
        .map(|row| StoredSource {
            id: id.value(row).to_owned(),
            library: library.value(row).to_owned(),
            version: version.value(row).to_owned(),
            request: request.value(row).to_owned(),
            state: state.value(row).to_owned(),
        })
        .collect())
}
