//! The content index: for every trigram, the files that hold it.
//!
//! A file gets a new id every time its text is indexed, and ids only grow, so every
//! posting list is appended to in order and kept as varint deltas. A changed or removed
//! file's old id is left in the lists and dropped when a query's ids are looked up (the
//! tree knows which ids are live); when dead ids outweigh live ones the index is rebuilt.

use rustc_hash::FxHashMap;

use super::plan::{each_trigram, Query};

/// The ids of one trigram's files: the last id, and every id as the delta from the one
/// before it (LEB128).
#[derive(Default)]
struct List {
    last: u32,
    deltas: Vec<u8>,
}

impl List {
    fn push(&mut self, id: u32) {
        let mut delta = id - self.last;
        self.last = id;
        while delta >= 0x80 {
            self.deltas.push((delta as u8) | 0x80);
            delta >>= 7;
        }
        self.deltas.push(delta as u8);
    }

    fn ids(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.deltas.len());
        let (mut id, mut delta, mut shift) = (0u32, 0u32, 0);
        for &b in &self.deltas {
            delta |= u32::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                id += delta;
                out.push(id);
                (delta, shift) = (0, 0);
            } else {
                shift += 7;
            }
        }
        out
    }
}

/// Every trigram's posting list, and the bytes they take.
#[derive(Default)]
pub(crate) struct Postings {
    lists: FxHashMap<u32, List>,
    /// Bytes of the lists' deltas (what `bytes` reports, with the map's own cost).
    delta_bytes: usize,
}

/// What one map entry costs beyond its deltas: the key, the list, the table's slot.
const ENTRY_BYTES: usize = 48;

impl Postings {
    /// Adds the distinct trigrams of one file's text under `id`, larger than every id
    /// added before. `seen` is a scratch bit set of 2^24 bits, all clear, left clear.
    pub(crate) fn add(&mut self, id: u32, text: &[u8], seen: &mut Seen) {
        let mut found = Vec::new();
        each_trigram(text, |t| {
            if seen.insert(t) {
                found.push(t);
            }
        });
        for &t in &found {
            let list = self.lists.entry(t).or_default();
            let before = list.deltas.len();
            list.push(id);
            self.delta_bytes += list.deltas.len() - before;
            seen.remove(t);
        }
    }

    /// The memory the lists hold, as an estimate of what the allocator gave them.
    pub(crate) fn bytes(&self) -> usize {
        self.delta_bytes + self.lists.capacity() * ENTRY_BYTES
    }

    /// The ids a query admits, in increasing order; `None` when it admits every file.
    pub(crate) fn eval(&self, query: &Query) -> Option<Vec<u32>> {
        match query {
            Query::All => None,
            Query::Tri(t) => Some(self.lists.get(t).map_or_else(Vec::new, List::ids)),
            Query::And(parts) => {
                let mut lists: Vec<Vec<u32>> = parts.iter().filter_map(|q| self.eval(q)).collect();
                lists.sort_by_key(Vec::len);
                let mut lists = lists.into_iter();
                let first = lists.next()?;
                Some(lists.fold(first, |acc, next| intersect(&acc, &next)))
            }
            Query::Or(parts) => {
                let mut acc = Vec::new();
                for part in parts {
                    acc = union(&acc, &self.eval(part)?);
                }
                Some(acc)
            }
        }
    }
}

/// A set of trigrams as 2^24 bits: the per-file scratch of [`Postings::add`].
pub(crate) struct Seen(Vec<u64>);

impl Seen {
    pub(crate) fn new() -> Seen {
        Seen(vec![0; (1 << 24) / 64])
    }

    fn insert(&mut self, t: u32) -> bool {
        let (word, bit) = ((t >> 6) as usize, 1u64 << (t & 63));
        let fresh = self.0[word] & bit == 0;
        self.0[word] |= bit;
        fresh
    }

    fn remove(&mut self, t: u32) {
        self.0[(t >> 6) as usize] &= !(1u64 << (t & 63));
    }
}

fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(a.len().min(b.len())));
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                (i, j) = (i + 1, j + 1);
            }
        }
    }
    out
}

pub(crate) fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(a.len() + b.len()));
    while i < a.len() || j < b.len() {
        let next = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x == y => {
                (i, j) = (i + 1, j + 1);
                x
            }
            (Some(&x), Some(&y)) if x < y => {
                i += 1;
                x
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (_, Some(&y)) => {
                j += 1;
                y
            }
            (None, None) => unreachable!(),
        };
        out.push(next);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::plan::trigram;
    use super::*;

    fn index(texts: &[&str]) -> Postings {
        let (mut postings, mut seen) = (Postings::default(), Seen::new());
        for (id, text) in texts.iter().enumerate() {
            postings.add(id as u32, text.as_bytes(), &mut seen);
        }
        postings
    }

    fn tri(s: &str) -> Query {
        let b = s.as_bytes();
        Query::Tri(trigram(b[0], b[1], b[2]))
    }

    #[test]
    fn a_query_finds_the_files_holding_its_trigrams() {
        let p = index(&["hello world", "say hello", "nothing", "HELLO"]);
        assert_eq!(p.eval(&tri("hel")), Some(vec![0, 1, 3]));
        assert_eq!(p.eval(&Query::And(vec![tri("hel"), tri("wor")])), Some(vec![0]));
        assert_eq!(p.eval(&Query::Or(vec![tri("wor"), tri("thi")])), Some(vec![0, 2]));
        assert_eq!(p.eval(&tri("zzz")), Some(vec![]));
        assert_eq!(p.eval(&Query::All), None);
        assert_eq!(p.eval(&Query::Or(vec![tri("wor"), Query::All])), None);
        assert_eq!(p.eval(&Query::And(vec![tri("wor"), Query::All])), Some(vec![0]));
    }

    #[test]
    fn deltas_round_trip_over_large_gaps() {
        let mut list = List::default();
        let ids = [0, 1, 127, 128, 300, 70_000, 5_000_000, u32::MAX - 1];
        for id in ids {
            list.push(id);
        }
        assert_eq!(list.ids(), ids);
    }

    #[test]
    fn the_scratch_set_is_left_clear() {
        let (mut postings, mut seen) = (Postings::default(), Seen::new());
        postings.add(0, b"abcabcabc", &mut seen);
        assert!(seen.0.iter().all(|w| *w == 0));
        assert!(postings.bytes() > 0);
    }
}
