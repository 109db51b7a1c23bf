//! Names listed in a sentence: "a", "a or b", "a, b or c".
//!
//! Error messages ("use keyword, dense or hybrid"), the file types an
//! upload takes and a search's notices all list names; one function says
//! them the same way everywhere.

/// The names as alternatives: "a, b or c".
pub fn one_of<S: AsRef<str>>(names: &[S]) -> String {
    listed(names, "or")
}

/// The names together: "a, b and c".
pub fn all_of<S: AsRef<str>>(names: &[S]) -> String {
    listed(names, "and")
}

fn listed<S: AsRef<str>>(names: &[S], word: &str) -> String {
    match names {
        [] => String::new(),
        [one] => one.as_ref().to_owned(),
        [rest @ .., last] => {
            let rest: Vec<&str> = rest.iter().map(AsRef::as_ref).collect();
            format!("{} {word} {}", rest.join(", "), last.as_ref())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_as_a_sentence() {
        assert_eq!(one_of::<&str>(&[]), "");
        assert_eq!(one_of(&["rrf"]), "rrf");
        assert_eq!(one_of(&["rrf", "dbsf"]), "rrf or dbsf");
        assert_eq!(all_of(&["git", "npm", "react"]), "git, npm and react");
        assert_eq!(all_of(&[String::from("a"), String::from("b")]), "a and b");
    }
}
