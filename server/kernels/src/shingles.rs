//! The same passage among many texts: each text's 5-word shingles hashed
//! once, and an index from shingle to text, so that a search's pool of
//! hundreds of chunks is compared in about the time it takes to read
//! their words rather than pair by pair.
//!
//! Here, not in the server, because it runs on every search: the dev build
//! that tests and `make run` use optimises this crate only, and hashing a
//! pool's words unoptimised cost more than the rest of the search
//! (docs/benchmarks.md, "Concept questions").

use foldhash::HashMap;

/// Words per shingle.
pub const SHINGLE_WORDS: usize = 5;

/// A text's shingles: the distinct hashes of each run of
/// [`SHINGLE_WORDS`] words (lower-cased, split on whitespace), sorted; a
/// text of fewer words is one shingle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shingles(Vec<u64>);

impl Shingles {
    pub fn of(text: &str) -> Self {
        let words: Vec<u64> = text.split_whitespace().map(word_hash).collect();
        let mut hashes: Vec<u64> = if words.len() < SHINGLE_WORDS {
            vec![run_hash(&words)]
        } else {
            words.windows(SHINGLE_WORDS).map(run_hash).collect()
        };
        hashes.sort_unstable();
        hashes.dedup();
        Self(hashes)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The share of the smaller set found in the larger.
    pub fn containment(&self, other: &Self) -> f64 {
        let smaller = self.len().min(other.len());
        if smaller == 0 {
            return 0.0;
        }
        let (mut a, mut b, mut shared) = (0, 0, 0usize);
        while a < self.0.len() && b < other.0.len() {
            match self.0[a].cmp(&other.0[b]) {
                std::cmp::Ordering::Less => a += 1,
                std::cmp::Ordering::Greater => b += 1,
                std::cmp::Ordering::Equal => {
                    shared += 1;
                    a += 1;
                    b += 1;
                }
            }
        }
        shared as f64 / smaller as f64
    }
}

/// For each of `texts` in order, the first earlier text it repeats: one
/// holding at least `share` of the smaller of the two shingle sets, among
/// the earlier texts `comparable(earlier, this)` allows that repeat none
/// themselves (a copy of a copy is a copy of the first). `None` where a
/// text repeats none. `comparable` is a trait object, not a generic, so
/// that this loop is compiled here, optimised, and not in the caller.
pub fn first_copies(
    texts: &[Shingles],
    share: f64,
    comparable: &dyn Fn(usize, usize) -> bool,
) -> Vec<Option<usize>> {
    // The texts holding each shingle, as chains through one list: the
    // shingle's last holder, then each holder's previous one. No list of
    // its own per shingle, since nearly every shingle has one holder.
    const END: u32 = u32::MAX;
    let total: usize = texts.iter().map(Shingles::len).sum();
    let mut last: HashMap<u64, u32> = HashMap::with_capacity_and_hasher(total, Default::default());
    let mut chain: Vec<(u32, u32)> = Vec::with_capacity(total);
    let mut shared = vec![0usize; texts.len()];
    let mut touched: Vec<usize> = Vec::new();
    let mut found = Vec::with_capacity(texts.len());
    for (at, own) in texts.iter().enumerate() {
        for hash in &own.0 {
            let mut link = last.get(hash).copied().unwrap_or(END);
            while link != END {
                let (earlier, previous) = chain[link as usize];
                let earlier = earlier as usize;
                if shared[earlier] == 0 {
                    touched.push(earlier);
                }
                shared[earlier] += 1;
                link = previous;
            }
        }
        touched.sort_unstable();
        let first = touched.iter().copied().find(|&earlier| {
            let smaller = own.len().min(texts[earlier].len()).max(1);
            shared[earlier] as f64 / smaller as f64 >= share && comparable(earlier, at)
        });
        for earlier in touched.drain(..) {
            shared[earlier] = 0;
        }
        if first.is_none() {
            for hash in &own.0 {
                let previous = last.insert(*hash, chain.len() as u32).unwrap_or(END);
                chain.push((at as u32, previous));
            }
        }
        found.push(first);
    }
    found
}

/// A word's hash, lower-cased as it is read (FNV-1a over its characters;
/// an ASCII word, most of them, byte by byte, to the same value).
fn word_hash(word: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    let step = |h: u64, c: u64| (h ^ c).wrapping_mul(0x0000_0100_0000_01b3);
    if word.is_ascii() {
        word.bytes()
            .fold(OFFSET, |h, b| step(h, u64::from(b.to_ascii_lowercase())))
    } else {
        word.chars()
            .flat_map(char::to_lowercase)
            .fold(OFFSET, |h, c| step(h, u64::from(c)))
    }
}

/// A run of words' hash, in order.
fn run_hash(words: &[u64]) -> u64 {
    let h = words.iter().fold(0x9e37_79b9_7f4a_7c15u64, |h, w| {
        (h.rotate_left(23) ^ w).wrapping_mul(0xff51_afd7_ed55_8ccd)
    });
    h ^ (h >> 29)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "Scoped packages are not public by default. You will need to specify \
                        the access flag with the initial publish command. This will publish the \
                        package and set access to public as if you had run the access command.";

    fn same(a: &str, b: &str) -> bool {
        Shingles::of(a).containment(&Shingles::of(b)) >= 0.9
    }

    #[test]
    fn the_same_text_cut_or_edited_a_little_is_the_same_passage() {
        assert!(same(TEXT, &TEXT.replace(' ', "\n ")));
        assert!(same(TEXT, &TEXT.to_uppercase()));
        let edited = TEXT.replace("initial", "first");
        assert!(Shingles::of(TEXT).containment(&Shingles::of(&edited)) < 1.0);
        assert!(same(
            TEXT,
            &format!("{TEXT} Another sentence follows it here.")
        ));
        // Half of it, beside other words, is not; nor the words reordered.
        let half: Vec<&str> = TEXT.split_whitespace().take(18).collect();
        let other = format!(
            "{} and then something else entirely, about other things",
            half.join(" ")
        );
        assert!(!same(TEXT, &other));
        let mut reversed: Vec<&str> = TEXT.split_whitespace().collect();
        reversed.reverse();
        assert!(!same(TEXT, &reversed.join(" ")));
        assert!(same("Run it.", "run  IT."));
        assert!(!same("Run it.", "Stop it."));
    }

    #[test]
    fn each_text_is_matched_with_the_first_comparable_one_it_repeats() {
        let other = "A different paragraph about folders and where packages are placed \
                     when two of them need the same dependency.";
        let texts: Vec<Shingles> = [TEXT, other, TEXT, TEXT, &format!("{TEXT} Default: true")]
            .iter()
            .map(|t| Shingles::of(t))
            .collect();
        // Text 3 may not be compared with text 0 (say, the same page).
        let found = first_copies(&texts, 0.9, &|earlier, this| !(earlier == 0 && this == 3));
        assert_eq!(found, [None, None, Some(0), None, Some(0)]);
        assert_eq!(first_copies(&[], 0.9, &|_, _| true), []);
    }
}
