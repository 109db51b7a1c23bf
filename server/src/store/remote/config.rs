//! How to reach an S3-compatible object store: the settings an `s3://`
//! store is opened with, from flags or the usual AWS variables.

use clap::Args;

/// The block cache's default size for an `s3://` store, in MiB: a bound
/// on memory beside what a serving process holds anyway, not a measured
/// working set; a larger corpus wants a larger cache.
pub const S3_CACHE_MIB: u64 = 512;

/// How to reach an S3-compatible object store, for a store at
/// `s3://bucket/prefix`. Anything left unset comes from the usual AWS
/// variables (`AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_ALLOW_HTTP`), so
/// credentials need not appear on a command line.
#[derive(Clone, Args)]
pub struct S3Config {
    /// The S3 endpoint, for stores other than AWS S3 (MinIO, R2, Ceph RGW): `http://host:9000`. An `http://` endpoint is allowed without TLS.
    #[arg(long = "s3-endpoint", env = "DOCSHELF_S3_ENDPOINT")]
    pub endpoint: Option<String>,

    /// The bucket's region (default: `AWS_REGION`, else us-east-1).
    #[arg(long = "s3-region", env = "DOCSHELF_S3_REGION")]
    pub region: Option<String>,

    /// The access key id (default: `AWS_ACCESS_KEY_ID`, else the instance's role).
    #[arg(
        long = "s3-access-key-id",
        env = "DOCSHELF_S3_ACCESS_KEY_ID",
        hide_env_values = true
    )]
    pub access_key_id: Option<String>,

    /// The secret access key (default: `AWS_SECRET_ACCESS_KEY`). Prefer the variable to the flag: flags show in process listings.
    #[arg(
        long = "s3-secret-access-key",
        env = "DOCSHELF_S3_SECRET_ACCESS_KEY",
        hide_env_values = true
    )]
    pub secret_access_key: Option<String>,

    /// Memory for the cache of the table files an `s3://` store reads (data, index and deletion files, which never change once written), in MiB.
    #[arg(
        long = "s3-cache-mib",
        env = "DOCSHELF_S3_CACHE_MIB",
        default_value_t = S3_CACHE_MIB
    )]
    pub cache_mib: u64,
}

impl Default for S3Config {
    fn default() -> Self {
        Self {
            endpoint: None,
            region: None,
            access_key_id: None,
            secret_access_key: None,
            cache_mib: S3_CACHE_MIB,
        }
    }
}

/// Never prints the secret, so a logged configuration cannot leak it.
impl std::fmt::Debug for S3Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Config")
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .field(
                "secret_access_key",
                &self.secret_access_key.as_ref().map(|_| "<hidden>"),
            )
            .field("cache_mib", &self.cache_mib)
            .finish()
    }
}
