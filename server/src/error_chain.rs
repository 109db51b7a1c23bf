//! Reading an error's chain and an upstream's message for a person.
//!
//! A leaf: the LLM client and the object-store check both explain failures
//! that come from another service, and neither should reach up into the
//! engine's errors to do it.

/// An error and every cause under it, outermost first: what a message
/// for a person, or a decision on the failure's kind, is read from.
pub fn causes<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(error), |e| e.source())
}

/// `text` on one line, cut to `chars` characters and ending in `…` where
/// it was cut: an upstream's message (an error body, an XML answer) can be
/// any length, and a reader should see that there was more.
pub fn cut(text: &str, chars: usize) -> String {
    let mut line: String = text
        .chars()
        .take(chars)
        .map(|c| if c == '\n' { ' ' } else { c })
        .collect();
    if text.chars().nth(chars).is_some() {
        line.push('…');
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_message_is_one_line_and_says_it_was_cut() {
        assert_eq!(cut("bad\nkey", 300), "bad key");
        assert_eq!(cut("abcdef", 6), "abcdef");
        assert_eq!(cut("abcdéf", 4), "abcd…");
    }

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
