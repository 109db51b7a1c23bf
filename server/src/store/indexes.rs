//! The chunk table's indexes: built when missing, new rows folded in, and
//! the keyword leg's search field added to tables written before it.

use lancedb::index::scalar::{BTreeIndexBuilder, BitmapIndexBuilder, FtsIndexBuilder};
use lancedb::index::Index;
use lancedb::table::OptimizeAction;
use lancedb::Table;

use super::{schema, writers, Store, StoreError};

/// How the full-text index reads `search_text`: LanceDB's defaults (simple
/// tokens, lower case, English stems, stop words out, ASCII folding). The
/// in-memory copy's keyword index reads text with the analyzer these build
/// (`super::keywords`), so both ways of answering see the same tokens.
pub(super) fn full_text_params() -> FtsIndexBuilder {
    FtsIndexBuilder::default()
}

impl Store {
    /// Compacts the table, builds any missing index and folds new rows into
    /// the existing ones, so full-text search covers everything stored so
    /// far and reads stay fast.
    ///
    /// LanceDB's full-text index does not see rows added after it was built
    /// until the table is optimised; ingestion calls this before it reports
    /// a job done. Every stored document is one commit and so one small
    /// fragment: without compaction a search would open hundreds of files.
    #[tracing::instrument(skip_all)]
    pub async fn refresh_indexes(&self) -> Result<(), StoreError> {
        let _writer = self.begin_write().await?;
        let rows = self.chunks.count_rows(None).await?;
        if rows == 0 {
            return Ok(());
        }
        let compaction = self
            .chunks
            .optimize(OptimizeAction::Compact {
                options: Default::default(),
                remap_options: None,
            })
            .await?
            .compaction;
        if let Some(c) = compaction {
            tracing::info!(
                removed = c.fragments_removed,
                added = c.fragments_added,
                "compacted the chunk table"
            );
        }
        let indices = self.chunks.list_indices().await?;
        // Library and version have few distinct values: bitmaps answer their
        // equality filters fastest. File paths are nearly unique: a B-tree.
        // The keyword leg searches one full-text field, context and text
        // together (see `schema::search_text`).
        // Embedding inputs are looked up by their hash when a page is
        // stored (`Store::vectors_by_input`): a B-tree too.
        let wanted: [(&str, Index); 5] = [
            ("library", Index::Bitmap(BitmapIndexBuilder::default())),
            ("version", Index::Bitmap(BitmapIndexBuilder::default())),
            ("file_path", Index::BTree(BTreeIndexBuilder::default())),
            (
                schema::INPUT_HASH,
                Index::BTree(BTreeIndexBuilder::default()),
            ),
            (schema::SEARCH_TEXT, Index::FTS(full_text_params())),
        ];
        for (column, index) in wanted {
            if !indices.iter().any(|i| i.columns == [column]) {
                tracing::info!(column, "building index");
                self.chunks.create_index(&[column], index).execute().await?;
            }
        }
        // An older store searched `text` and `context` as two fields, each
        // with an index of its own: nothing reads those now, and every
        // refresh would keep folding rows into them.
        for index in &indices {
            if index.columns == ["text"] || index.columns == ["context"] {
                tracing::info!(name = %index.name, "dropping a full-text index no search uses");
                self.chunks.drop_index(&index.name).await?;
            }
        }
        self.maintain_vector_index(rows as u64, self.vector_index_min_rows)
            .await?;
        // Folds rows added since into every index (new indexes are already
        // whole; this is then cheap) and drops versions older than a week.
        self.chunks.optimize(OptimizeAction::All).await?;
        Ok(())
    }

    /// Rows that the full-text index does not cover yet: all of them
    /// while it does not exist (a store written before the keyword leg's
    /// one field, until its first refresh). Ingestion folds new rows in
    /// before a job ends, but a process killed mid-job (or a refresh that
    /// failed, say on a full disk) leaves stored rows the keyword leg
    /// cannot see.
    pub async fn unindexed_text_rows(&self) -> Result<usize, StoreError> {
        let index = self
            .chunks
            .list_indices()
            .await?
            .into_iter()
            .find(|i| i.columns == [schema::SEARCH_TEXT]);
        match index {
            Some(index) => Ok(self
                .chunks
                .index_stats(&index.name)
                .await?
                .map_or(0, |stats| stats.num_unindexed_rows)),
            None => Ok(self.chunks.count_rows(None).await?),
        }
    }
}

/// Gives a chunk table written before the keyword leg's one field existed
/// that column, filled from each row's context and text, in one commit (a
/// new data file per fragment; the rows are not rewritten). Its index is
/// built by the next [`Store::refresh_indexes`], which the engine runs on
/// open when [`Store::unindexed_text_rows`] finds the index missing (until
/// then only the in-memory copy's keyword postings find anything). Writers take turns, so two servers
/// opening the same old store add it once.
pub(super) async fn add_search_text(
    chunks: &Table,
    write: &writers::WriteLock,
) -> Result<(), StoreError> {
    add_column_once(
        chunks,
        write,
        schema::SEARCH_TEXT,
        lancedb::table::NewColumnTransform::SqlExpressions(vec![(
            schema::SEARCH_TEXT.to_owned(),
            schema::SEARCH_TEXT_SQL.to_owned(),
        )]),
    )
    .await
}

/// Gives a table written before [`schema::INPUT_HASH`] existed (the chunk
/// table or the staging table) that column, empty in every row, in one
/// commit that rewrites no rows. Those rows' vectors are still reused for
/// their own page (`Store::page_vectors`); rows written from then on are
/// found by their input anywhere.
pub(super) async fn add_input_hash(
    table: &Table,
    write: &writers::WriteLock,
) -> Result<(), StoreError> {
    let column = arrow_schema::Field::new(schema::INPUT_HASH, arrow_schema::DataType::Utf8, true);
    add_column_once(
        table,
        write,
        schema::INPUT_HASH,
        lancedb::table::NewColumnTransform::AllNulls(std::sync::Arc::new(
            arrow_schema::Schema::new(vec![column]),
        )),
    )
    .await
}

/// Adds `column` to `table` with `transform` unless it is there. Writers
/// take turns and look again once it is theirs, so two servers opening the
/// same old store add it once.
pub(super) async fn add_column_once(
    table: &Table,
    write: &writers::WriteLock,
    column: &str,
    transform: lancedb::table::NewColumnTransform,
) -> Result<(), StoreError> {
    let has = |schema: arrow_schema::SchemaRef| schema.fields().iter().any(|f| f.name() == column);
    if has(table.schema().await?) {
        return Ok(());
    }
    let _turn = write.acquire().await?;
    table.checkout_latest().await?;
    if has(table.schema().await?) {
        return Ok(());
    }
    tracing::info!(
        table = table.name(),
        column,
        "adding a column to a table written before it existed"
    );
    table.add_columns().transform(transform).execute().await?;
    Ok(())
}
