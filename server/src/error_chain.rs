//! Reading an error's chain, outermost cause first.
//!
//! A leaf: the LLM client, the object-store check and the store's failure
//! reading all explain failures that come from elsewhere, and none should
//! reach up into the engine's errors to do it. (Messages are cut to length
//! by `index_core::validate::cut`, the one place every face uses.)

/// An error and every cause under it, outermost first: what a message
/// for a person, or a decision on the failure's kind, is read from.
pub fn causes<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(error), |e| e.source())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_run_from_the_outermost_to_the_innermost() {
        #[derive(Debug, thiserror::Error)]
        #[error("cannot read the manifest")]
        struct Outer(#[source] std::io::Error);

        let err = Outer(std::io::Error::other("disk gone"));
        let chain: Vec<String> = causes(&err).map(ToString::to_string).collect();
        assert_eq!(chain, ["cannot read the manifest", "disk gone"]);
    }
}
