//! Where a store lives: a local directory, or an object store named by a
//! URI (`s3://bucket/prefix`).

/// The directory a store location names (a path or a `file://` URL), or
/// `None` for an object-store URI such as `s3://…`.
pub fn local_dir(location: &str) -> Option<std::path::PathBuf> {
    match location.split_once("://") {
        None => Some(location.into()),
        Some((scheme, path)) if scheme.eq_ignore_ascii_case("file") => Some(path.into()),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_locations_are_told_apart_from_object_store_uris() {
        assert_eq!(local_dir("./data"), Some("./data".into()));
        assert_eq!(
            local_dir("/var/lib/docshelf"),
            Some("/var/lib/docshelf".into())
        );
        assert_eq!(
            local_dir("file:///var/lib/docshelf"),
            Some("/var/lib/docshelf".into())
        );
        assert_eq!(local_dir("s3://bucket/docshelf"), None);
        assert_eq!(local_dir("gs://bucket"), None);
    }
}
