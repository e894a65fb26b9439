//! The trigram query a regex implies: a boolean formula over trigrams that every file
//! holding a match must satisfy, so that a search reads only the files whose trigrams
//! satisfy it (Russ Cox's codesearch, as Zoekt and GitHub's code search do it).
//!
//! [`plan`] parses the pattern exactly as grep's matcher does and walks its `Hir`,
//! computing for each node what is known of the strings it matches ([`Info`]): whether
//! one may be empty, the exact set of them while it is small, else sets of their
//! prefixes and suffixes, and the query the text around a match must satisfy. Every
//! string here is folded (ASCII lowercase, byte by byte), as the index folds the file's
//! trigrams, so `(?i)HELLO` and `hello` plan alike. The plan is never stricter than the
//! regex: each rule below only forgets what it cannot keep small.
//!
//! The trigrams a file is checked against must be those of the bytes grep's searcher
//! sees: a UTF-16 file with a byte-order mark is searched transcoded to UTF-8 (the
//! searcher's BOM sniffing), so its trigrams are those of the UTF-8 text, not the file's.

use std::collections::BTreeSet;

use regex_syntax::hir::{Class, Hir, HirKind};

/// The most strings an exact, prefix or suffix set keeps.
const MAX_SET: usize = 64;
/// The most bytes the strings of an exact set hold in all.
const MAX_SET_BYTES: usize = 4096;
/// The most strings a character class becomes (past this it is "any character").
const MAX_CLASS: usize = 16;
/// The most characters of a class looked at before it is taken as "any character".
const MAX_CLASS_SCAN: u32 = 256;
/// The most copies `x{n}` is spelled out into.
const MAX_COPIES: u32 = 4;
/// The most strings spanning a junction of a concatenation that are turned into trigrams.
const MAX_JUNCTION: usize = 256;

type Set = BTreeSet<Vec<u8>>;

/// One byte as the index sees it: ASCII-lowercased.
pub(crate) fn fold(b: u8) -> u8 {
    b.to_ascii_lowercase()
}

/// One trigram: three bytes, each ASCII-lowercased (`fold`), packed big-endian into the
/// low 24 bits.
pub(crate) fn trigram(a: u8, b: u8, c: u8) -> u32 {
    (u32::from(fold(a)) << 16) | (u32::from(fold(b)) << 8) | u32::from(fold(c))
}

/// Calls `f` on every trigram of `bytes` (windows of 3, folded), duplicates included.
pub(crate) fn each_trigram(bytes: &[u8], mut f: impl FnMut(u32)) {
    for w in bytes.windows(3) {
        f(trigram(w[0], w[1], w[2]));
    }
}

/// What a file must hold to be worth searching.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Query {
    /// Every file may match.
    All,
    /// The file holds this trigram.
    Tri(u32),
    /// The file satisfies every part (never empty, never nested directly, no `All`).
    And(Vec<Query>),
    /// The file satisfies some part (at least two, never nested directly, no `All`).
    Or(Vec<Query>),
}

impl Query {
    /// Whether a file whose set of (folded) trigrams is `has` may match (the tests' model
    /// of what the posting lists compute).
    #[cfg(test)]
    pub(crate) fn admits(&self, has: &impl Fn(u32) -> bool) -> bool {
        match self {
            Query::All => true,
            Query::Tri(t) => has(*t),
            Query::And(parts) => parts.iter().all(|q| q.admits(has)),
            Query::Or(parts) => parts.iter().any(|q| q.admits(has)),
        }
    }

    /// The conjunction of `parts`, flattened, without `All` and duplicates, and without an
    /// `Or` that one of the other parts already implies.
    fn and(parts: Vec<Query>) -> Query {
        let mut out = Vec::new();
        for part in parts {
            match part {
                Query::All => {}
                Query::And(inner) => out.extend(inner),
                q => out.push(q),
            }
        }
        out.sort();
        out.dedup();
        let plain: Vec<Query> = out.iter().filter(|q| !matches!(q, Query::Or(_))).cloned().collect();
        out.retain(|q| match q {
            Query::Or(alts) => !alts.iter().any(|alt| members(alt).iter().all(|m| plain.contains(m))),
            _ => true,
        });
        match out.len() {
            0 => Query::All,
            1 => out.pop().unwrap(),
            _ => Query::And(out),
        }
    }

    /// The disjunction of `parts`, flattened and deduplicated; `All` if any part is. What
    /// every part requires is pulled out (`(a∧b)∨(a∧c)` is `a∧(b∨c)`), and a part that
    /// implies another is dropped (`a∨(a∧b)` is `a`).
    fn or(parts: Vec<Query>) -> Query {
        let mut out = Vec::new();
        for part in parts {
            match part {
                Query::All => return Query::All,
                Query::Or(inner) => out.extend(inner),
                q => out.push(q),
            }
        }
        out.sort();
        out.dedup();
        if out.len() < 2 {
            // (No caller passes nothing; an empty `Or` would reject every file, `All` none.)
            return out.pop().unwrap_or(Query::All);
        }
        let sets: Vec<Vec<Query>> = out.iter().map(members).collect();
        let common: Vec<Query> = sets[0].iter().filter(|m| sets[1..].iter().all(|s| s.contains(m))).cloned().collect();
        if !common.is_empty() {
            let rest: Vec<Query> =
                sets.into_iter().map(|s| Query::and(s.into_iter().filter(|m| !common.contains(m)).collect())).collect();
            let mut parts = common;
            parts.push(Query::or(rest));
            return Query::and(parts);
        }
        let implies_another = |i: usize| (0..sets.len()).any(|j| j != i && sets[j].iter().all(|m| sets[i].contains(m)));
        let keep: Vec<bool> = (0..sets.len()).map(|i| !implies_another(i)).collect();
        let mut out: Vec<Query> = out.into_iter().zip(keep).filter_map(|(q, k)| k.then_some(q)).collect();
        match out.len() {
            0 => Query::All,
            1 => out.pop().unwrap(),
            _ => Query::Or(out),
        }
    }
}

/// The parts a query requires together: an `And`'s parts, or the query itself.
fn members(q: &Query) -> Vec<Query> {
    match q {
        Query::And(parts) => parts.clone(),
        q => vec![q.clone()],
    }
}

/// The query for a pattern as grep.rs's build_matcher compiles it (the tests' view of
/// [`plan_and_span`]).
#[cfg(test)]
pub(crate) fn plan(pattern: &str, case_insensitive: bool, multiline: bool) -> Query {
    plan_and_span(pattern, case_insensitive, multiline).0
}

/// The query for a pattern, and the most bytes a match of it can span when that is
/// bounded: every trigram the query requires lies inside one match, so within that many
/// bytes of one another.
pub(crate) fn plan_and_span(pattern: &str, case_insensitive: bool, multiline: bool) -> (Query, Option<usize>) {
    match parse(pattern, case_insensitive, multiline) {
        Some(hir) => (analyze(&hir).requirement(), hir.properties().maximum_len()),
        // The matcher reports the error; a plan that admits everything cannot hide it.
        None => (Query::All, None),
    }
}

fn parse(pattern: &str, case_insensitive: bool, multiline: bool) -> Option<regex_syntax::hir::Hir> {
    regex_syntax::ParserBuilder::new()
        .utf8(false)
        .unicode(true)
        .multi_line(true)
        .case_insensitive(case_insensitive)
        .crlf(true)
        .dot_matches_new_line(multiline)
        .octal(false)
        .build()
        .parse(pattern)
        .ok()
}

/// What is known of the (folded) strings a node matches. With `exact`, every match is
/// one of its strings and `prefix`/`suffix` are unused; without it, every match starts
/// with a string of `prefix` and ends with one of `suffix` (kept to two bytes each, the
/// most a trigram spanning a junction takes from one side). In both cases a text holding
/// a match satisfies `query`.
#[derive(Clone, Debug)]
struct Info {
    can_empty: bool,
    exact: Option<Set>,
    prefix: Set,
    suffix: Set,
    query: Query,
}

fn analyze(hir: &Hir) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::empty(),
        HirKind::Literal(lit) => Info::exact(Set::from([lit.0.iter().map(|&b| fold(b)).collect()])),
        HirKind::Class(class) => class_info(class),
        HirKind::Capture(cap) => analyze(&cap.sub),
        HirKind::Concat(subs) => subs.iter().map(analyze).reduce(concat).unwrap_or_else(Info::empty),
        HirKind::Alternation(subs) => subs.iter().map(analyze).reduce(alternate).unwrap_or_else(Info::empty),
        HirKind::Repetition(rep) => repetition(analyze(&rep.sub), rep.min, rep.max),
    }
}

/// `sub{min,max}`: while `max` is small, the alternation of its counts spelled out;
/// else, with `min` ≥ 1, what `min` copies (at most [`MAX_COPIES`]) in a row know.
fn repetition(sub: Info, min: u32, max: Option<u32>) -> Info {
    let copies = |k: u32| match k {
        0 => Info::empty(),
        k => (1..k).fold(sub.clone(), |acc, _| concat(acc, sub.clone())),
    };
    match max {
        Some(max) if max <= MAX_COPIES => (min..=max).map(copies).reduce(alternate).unwrap_or_else(|| Info::any(true)),
        _ if min == 0 => Info::any(true),
        _ => {
            // A match is s₁…sₖ with k ≥ min: it starts and ends with c copies of the sub
            // (c = min(min, MAX_COPIES)) and holds them, but is no exact string.
            let edge = copies(min.min(MAX_COPIES));
            let (prefix, suffix, query) = (edge.prefixes(), edge.suffixes(), edge.requirement());
            Info { can_empty: sub.can_empty, exact: None, prefix, suffix, query }.tidy()
        }
    }
}

/// A class as the set of its characters' (folded) encodings while small, else any one
/// character. An empty class (which matches nothing) is taken as any character too.
fn class_info(class: &Class) -> Info {
    let mut set = Set::new();
    match class {
        Class::Unicode(cls) => {
            let count: u32 = cls.ranges().iter().map(|r| u32::from(r.end()) - u32::from(r.start()) + 1).sum();
            if count == 0 || count > MAX_CLASS_SCAN {
                return Info::any(false);
            }
            for c in cls.ranges().iter().flat_map(|r| r.start()..=r.end()) {
                let mut buf = [0; 4];
                set.insert(c.encode_utf8(&mut buf).bytes().map(fold).collect());
            }
        }
        Class::Bytes(cls) => {
            if cls.ranges().is_empty() {
                return Info::any(false);
            }
            for b in cls.ranges().iter().flat_map(|r| r.start()..=r.end()) {
                set.insert(vec![fold(b)]);
            }
        }
    }
    if set.len() > MAX_CLASS {
        return Info::any(false);
    }
    Info::exact(set)
}

impl Info {
    fn exact(set: Set) -> Info {
        let can_empty = set.contains(&Vec::new());
        Info { can_empty, exact: Some(set), prefix: Set::new(), suffix: Set::new(), query: Query::All }.tidy()
    }

    /// The empty string alone (an empty pattern, a look-around).
    fn empty() -> Info {
        Info::exact(Set::from([Vec::new()]))
    }

    /// Nothing known: any string (`can_empty`), or any non-empty one.
    fn any(can_empty: bool) -> Info {
        let empty = Set::from([Vec::new()]);
        Info { can_empty, exact: None, prefix: empty.clone(), suffix: empty, query: Query::All }
    }

    fn prefixes(&self) -> Set {
        self.exact.clone().unwrap_or_else(|| self.prefix.clone())
    }

    fn suffixes(&self) -> Set {
        self.exact.clone().unwrap_or_else(|| self.suffix.clone())
    }

    /// Everything known, as a query on the text around a match.
    fn requirement(&self) -> Query {
        match &self.exact {
            Some(set) => Query::and(vec![self.query.clone(), trigrams(set)]),
            None => Query::and(vec![self.query.clone(), trigrams(&self.prefix), trigrams(&self.suffix)]),
        }
    }

    /// Keeps the sets small: an exact set past its bounds becomes a query and the
    /// prefixes and suffixes it gives; prefix and suffix sets give their trigrams to the
    /// query and keep only the two bytes at their junction side.
    fn tidy(mut self) -> Info {
        if self.exact.as_ref().is_some_and(|set| set.len() > MAX_SET || bytes(set) > MAX_SET_BYTES) {
            let set = self.exact.take().unwrap();
            self.query = Query::and(vec![self.query, trigrams(&set)]);
            self.prefix = set.clone();
            self.suffix = set;
        }
        if self.exact.is_none() {
            self.query = Query::and(vec![self.query, trigrams(&self.prefix), trigrams(&self.suffix)]);
            self.prefix = trim(&self.prefix, Side::Front);
            self.suffix = trim(&self.suffix, Side::Back);
        }
        self
    }
}

fn concat(x: Info, y: Info) -> Info {
    let can_empty = x.can_empty && y.can_empty;
    if let Some(set) = x.exact.as_ref().zip(y.exact.as_ref()).and_then(|(a, b)| cross(a, b)) {
        let query = Query::and(vec![x.query, y.query]);
        return Info { can_empty, exact: Some(set), prefix: Set::new(), suffix: Set::new(), query }.tidy();
    }
    let prefix = match &x.exact {
        Some(a) => cross(a, &y.prefixes()).unwrap_or_else(|| a.clone()),
        None if x.can_empty => x.prefix.union(&y.prefixes()).cloned().collect(),
        None => x.prefix.clone(),
    };
    let suffix = match &y.exact {
        Some(b) => cross(&x.suffixes(), b).unwrap_or_else(|| b.clone()),
        None if y.can_empty => y.suffix.union(&x.suffixes()).cloned().collect(),
        None => y.suffix.clone(),
    };
    // A match is a match of x then one of y: it holds an end of the one followed by a
    // start of the other, whose trigrams neither side sees alone.
    let (ends, starts) = (trim(&x.suffixes(), Side::Back), trim(&y.prefixes(), Side::Front));
    let junction = if ends.len() * starts.len() <= MAX_JUNCTION {
        trigrams(&ends.iter().flat_map(|e| starts.iter().map(move |s| [e.as_slice(), s].concat())).collect())
    } else {
        Query::All
    };
    let query = Query::and(vec![x.requirement(), y.requirement(), junction]);
    Info { can_empty, exact: None, prefix, suffix, query }.tidy()
}

fn alternate(x: Info, y: Info) -> Info {
    let can_empty = x.can_empty || y.can_empty;
    if let (Some(a), Some(b)) = (&x.exact, &y.exact) {
        let set = a.union(b).cloned().collect();
        let query = Query::or(vec![x.query, y.query]);
        return Info { can_empty, exact: Some(set), prefix: Set::new(), suffix: Set::new(), query }.tidy();
    }
    let prefix = x.prefixes().union(&y.prefixes()).cloned().collect();
    let suffix = x.suffixes().union(&y.suffixes()).cloned().collect();
    let query = Query::or(vec![x.requirement(), y.requirement()]);
    Info { can_empty, exact: None, prefix, suffix, query }.tidy()
}

/// Every string of `a` followed by every string of `b`, unless that is too many.
fn cross(a: &Set, b: &Set) -> Option<Set> {
    if a.len() * b.len() > MAX_SET {
        return None;
    }
    let set: Set = a.iter().flat_map(|x| b.iter().map(move |y| [x.as_slice(), y].concat())).collect();
    (bytes(&set) <= MAX_SET_BYTES).then_some(set)
}

fn bytes(set: &Set) -> usize {
    set.iter().map(Vec::len).sum()
}

/// A text holding one of `set`'s strings holds all the trigrams of that string: an `Or`
/// of `And`s, or `All` once a string is too short to have any.
fn trigrams(set: &Set) -> Query {
    if set.is_empty() || set.iter().any(|s| s.len() < 3) {
        return Query::All;
    }
    let alts = set
        .iter()
        .map(|s| {
            let mut tris = Vec::new();
            each_trigram(s, |t| tris.push(Query::Tri(t)));
            Query::and(tris)
        })
        .collect();
    Query::or(alts)
}

#[derive(Clone, Copy)]
enum Side {
    Front,
    Back,
}

/// A prefix (`Front`) or suffix (`Back`) set cut to the two bytes on that side, without
/// strings another one implies; past [`MAX_SET`], nothing is known (`{""}`).
fn trim(set: &Set, side: Side) -> Set {
    let cut: Set = set
        .iter()
        .map(|s| match side {
            Side::Front => s[..s.len().min(2)].to_vec(),
            Side::Back => s[s.len().saturating_sub(2)..].to_vec(),
        })
        .collect();
    let implied = |s: &Vec<u8>| {
        cut.iter().any(|t| {
            t.len() < s.len()
                && match side {
                    Side::Front => s.starts_with(t),
                    Side::Back => s.ends_with(t),
                }
        })
    };
    let kept: Set = cut.iter().filter(|s| !implied(s)).cloned().collect();
    if kept.len() > MAX_SET {
        Set::from([Vec::new()])
    } else {
        kept
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use grep_matcher::Matcher;
    use grep_regex::{RegexMatcher, RegexMatcherBuilder};

    use super::*;

    fn tri(s: &str) -> Query {
        let b = s.as_bytes();
        Query::Tri(trigram(b[0], b[1], b[2]))
    }

    /// The trigrams of one word, all required.
    fn word(s: &str) -> Query {
        let mut tris = Vec::new();
        each_trigram(s.as_bytes(), |t| tris.push(Query::Tri(t)));
        Query::and(tris)
    }

    fn trigrams_of(text: &[u8]) -> HashSet<u32> {
        let mut set = HashSet::new();
        each_trigram(text, |t| {
            set.insert(t);
        });
        set
    }

    fn admits(q: &Query, text: &str) -> bool {
        let set = trigrams_of(text.as_bytes());
        q.admits(&|t| set.contains(&t))
    }

    /// The matcher exactly as grep.rs's `build_matcher` builds it.
    fn matcher(pattern: &str, case_insensitive: bool, multiline: bool) -> Option<RegexMatcher> {
        let mut builder = RegexMatcherBuilder::new();
        builder.multi_line(true).unicode(true).octal(false).case_insensitive(case_insensitive);
        if multiline {
            builder.dot_matches_new_line(true).crlf(true).line_terminator(None);
        } else {
            builder.line_terminator(Some(b'\n')).dot_matches_new_line(false).crlf(true);
        }
        builder.build(pattern).ok()
    }

    fn plain(pattern: &str) -> Query {
        plan(pattern, false, false)
    }

    #[test]
    fn trigrams_are_folded_and_packed_big_endian() {
        assert_eq!(trigram(b'A', b'b', b'C'), 0x61_62_63);
        assert_eq!(trigram(0xC3, 0x9F, b'Z'), 0xC3_9F_7A);
        let mut seen = Vec::new();
        each_trigram(b"aBcAbC", |t| seen.push(t));
        assert_eq!(seen, [0x616263, 0x626361, 0x636162, 0x616263]);
        each_trigram(b"ab", |_| panic!("two bytes have no trigram"));
    }

    #[test]
    fn an_identifier_after_a_word_run_needs_its_trigrams() {
        assert_eq!(plain(r"\w+Visitor\b"), word("visitor"));
        let mut tris = ["vis", "isi", "sit", "ito", "tor"].map(tri).to_vec();
        tris.sort();
        assert_eq!(word("visitor"), Query::And(tris));
    }

    #[test]
    fn an_alternation_of_words_needs_either() {
        assert_eq!(plain("foo|bar"), Query::Or(vec![tri("bar"), tri("foo")]));
        assert_eq!(plain("(foo|barbaz)"), Query::Or(vec![tri("foo"), word("barbaz")]));
    }

    #[test]
    fn case_is_folded() {
        assert_eq!(plain("(?i)HELLO"), word("hello"));
        assert_eq!(plan("HELLO", true, false), word("hello"));
        assert_eq!(plain("HELLO"), word("hello"));
    }

    #[test]
    fn what_holds_no_three_known_bytes_admits_everything() {
        for p in [".*", "a.c", "ab", "", "a|", "[a-z]+", r"\d{2}", "(abc)*", "x?y?z?", "((("] {
            assert_eq!(plain(p), Query::All, "{p}");
        }
    }

    #[test]
    fn an_alternation_inside_a_concatenation_keeps_the_common_part() {
        let q = plain("foo(bar|baz)");
        let common = ["foo", "oob", "oba"].map(tri).to_vec();
        assert_eq!(q, Query::and([common, vec![Query::or(vec![tri("bar"), tri("baz")])]].concat()));
        assert!(admits(&q, "xfoobaz") && !admits(&q, "foobat") && !admits(&q, "foo bar"));
        assert_eq!(
            plain("colou?r"),
            Query::and(vec![tri("col"), tri("olo"), Query::or(vec![tri("lor"), word("lour")])])
        );
    }

    #[test]
    fn a_small_class_is_a_set_of_strings() {
        let q = plain("ab[cd]e");
        assert_eq!(q, Query::or(vec![word("abce"), word("abde")]));
        assert!(admits(&q, "ABDE") && !admits(&q, "abee"));
        // Too large a class is any character; the trigrams around it remain.
        assert_eq!(plain("abc[a-z]def"), Query::and(vec![tri("abc"), tri("def")]));
    }

    #[test]
    fn case_folding_classes_keep_their_non_ascii_members() {
        let q = plain("(?i)kit");
        assert!(admits(&q, "KIT") && admits(&q, "\u{212A}it") && !admits(&q, "kat"));
        let q = plain("(?i)straße");
        for text in ["STRASSE", "STRAẞE", "ſtraße", "straße"] {
            let m = matcher("(?i)straße", false, false).unwrap().is_match(text.as_bytes()).unwrap();
            assert_eq!(admits(&q, text), m, "{text}");
        }
    }

    #[test]
    fn repetitions_keep_what_every_repeat_holds() {
        assert_eq!(plain("(ab){2,5}c"), Query::and(vec![tri("aba"), tri("bab"), tri("abc")]));
        // `(ab)+` is not exactly "ab": it admits "abab", and needs the junction with c.
        assert_eq!(plain("(ab)+"), Query::All);
        assert_eq!(plain("(ab)+c"), tri("abc"));
        assert_eq!(plain("abc{3}"), word("abccc"));
        assert_eq!(plain("(?:ab){3}"), word("ababab"));
        assert_eq!(plain("x(abc)*y"), Query::All);
        assert_eq!(plain("(?:foo)+bar"), word("foobar"));
        // A small bounded count is spelled out; a large minimum keeps MAX_COPIES copies.
        assert_eq!(plain("x(?:abc){0,2}yz"), Query::or(vec![tri("xyz"), word("xabcyz"), word("xabcabcyz")]));
        assert_eq!(plain("a{100}"), tri("aaa"));
        assert_eq!(plain("(?:ab){3,}"), word("ababab"));
    }

    #[test]
    fn nested_repetitions_plan_in_linear_time() {
        // Each level is analyzed once: spelling out counts by analyzing the sub again
        // would take 10¹² steps here.
        let pattern = format!("{}abc{}", "(?:".repeat(12), "){1,4}".repeat(12));
        assert_eq!(plain(&pattern), word("abc"));
        let pattern = format!("{}xy{}", "(?:".repeat(12), "){0,4}z".repeat(12));
        assert_eq!(plain(&pattern), Query::All);
    }

    #[test]
    fn anchors_and_boundaries_match_the_empty_string() {
        assert_eq!(plain("^foo$"), tri("foo"));
        assert_eq!(plain(r"\bfo\bo"), tri("foo"));
        assert_eq!(plain(r"(?m)^ab\s*$"), Query::All);
    }

    #[test]
    fn unicode_literals_plan_by_bytes() {
        let q = plain("日本");
        assert_eq!(q, word("日本"));
        assert!(admits(&q, "x日本y") && !admits(&q, "日x本"));
    }

    #[test]
    fn a_multiline_literal_needs_the_trigrams_across_its_newline() {
        let q = plan(r"foo\nbar", false, true);
        assert_eq!(q, word("foo\nbar"));
        assert!(admits(&q, "foo\nbar") && !admits(&q, "foo bar"));
        assert!(matcher(r"foo\nbar", false, true).unwrap().is_match(b"foo\nbar").unwrap());
    }

    #[test]
    fn a_pattern_that_does_not_parse_admits_everything() {
        assert_eq!(plain("foo("), Query::All);
        assert_eq!(plain(r"foo\"), Query::All);
    }

    #[test]
    fn queries_simplify() {
        let (a, b, c) = (Query::Tri(1), Query::Tri(2), Query::Tri(3));
        assert_eq!(
            Query::and(vec![Query::All, a.clone(), Query::and(vec![b.clone(), a.clone()])]),
            Query::And(vec![a.clone(), b.clone()])
        );
        assert_eq!(Query::or(vec![a.clone(), Query::All]), Query::All);
        assert_eq!(Query::or(vec![a.clone(), Query::and(vec![a.clone(), b.clone()])]), a);
        assert_eq!(Query::and(vec![a.clone(), Query::or(vec![a.clone(), b.clone()])]), a);
        assert_eq!(
            Query::or(vec![Query::and(vec![a.clone(), b.clone()]), Query::and(vec![a.clone(), c.clone()])]),
            Query::And(vec![a, Query::Or(vec![b, c])])
        );
    }

    /// Patterns whose planning has edges (byte classes, characters with three case forms,
    /// long repetitions, empty alternatives), each against texts the matcher matches: the
    /// plan admits them all, and is not `All`.
    #[test]
    fn edge_patterns_admit_what_the_matcher_matches() {
        let cases: &[(&str, bool, &[&[u8]])] = &[
            (r"(?-u:\xFF)ab", false, &[b"x\xFFab", b"\xFFAB"]),
            (r"(?i)ωωx", false, &["ΩΩX".as_bytes(), "\u{2126}ωx".as_bytes()]),
            (r"(?i)σας", false, &["ΣΑΣ".as_bytes(), "ςας".as_bytes()]),
            (r"(?i)ǆa", false, &["ǄA".as_bytes(), "ǅa".as_bytes()]),
            (r"(?i)[k-m]ey", false, &["\u{212A}EY".as_bytes(), b"ley"]),
            (r"a{100}", false, &[&[b'a'; 101]]),
            (r"(?:abc|)def", false, &[b"def", b"abcdef"]),
            (r"x(?:abc){0,2}yz", false, &[b"xyz", b"xabcabcyz"]),
            (r"(?:[ab]{3})+q", false, &[b"abaq", b"bbbaaaq"]),
            (r"foo\t?$", false, &[b"foo\r\n", b"xfoo\t"]),
            (r"(?s:.)foo", true, &[b"\nfoo", "ßfoo".as_bytes()]),
            (r"foo.bar", true, &[b"foo\nbar"]),
            (r"[^abc]xyz", false, &[b"dxyz", "日xyz".as_bytes()]),
            (r"\bword\b|other", false, &[b"a word.", b"another"]),
            (r"\x{212A}iss", false, &["\u{212A}iss".as_bytes()]),
        ];
        for &(pattern, multiline, texts) in cases {
            for ci in [false, true] {
                let q = plan(pattern, ci, multiline);
                let m = matcher(pattern, ci, multiline).unwrap_or_else(|| panic!("{pattern} does not build"));
                assert_ne!(q, Query::All, "{pattern}");
                let matched: Vec<&[u8]> = texts.iter().copied().filter(|t| m.is_match(t).unwrap()).collect();
                assert!(!matched.is_empty(), "{pattern} (i: {ci}) matches none of its texts");
                for text in matched {
                    let set = trigrams_of(text);
                    assert!(q.admits(&|t| set.contains(&t)), "{pattern} (i: {ci}) must admit {text:?}: {q:?}");
                }
            }
        }
    }

    /// xorshift64: deterministic, no crate.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn pick<T: Copy>(&mut self, items: &[T]) -> T {
            items[self.below(items.len())]
        }
    }

    /// A generated pattern, which renders to regex syntax and can be sampled for a string
    /// that likely matches it.
    enum Node {
        Lit(&'static str),
        /// A class as written, with characters it may match.
        Class(&'static str, &'static str),
        Look(&'static str),
        Cat(Vec<Node>),
        Alt(Vec<Node>),
        Rep(Box<Node>, u32, Option<u32>),
        /// A group, with an inline flag set (`i`, `-i`, or none).
        Group(Box<Node>, &'static str),
    }

    const LITS: &[&str] = &[
        "a", "b", "ab", "abc", "foo", "Bar", "k", "s", "ß", "ſ", "K", "日本", " ", "\n", "xyz", "kiss", "Straße", "sk_",
    ];
    const CLASSES: &[(&str, &str)] = &[
        ("[abc]", "abc"),
        ("[^a]", "bZ\nß"),
        ("[a-c]", "abc"),
        (r"\w", "aZ_9ßK"),
        (r"\d", "07"),
        (r"\s", " \t\n"),
        (".", "a\nß"),
        ("[kK]", "kK\u{212A}"),
        ("[sß]", "sSßẞſ"),
        (r"[\n]", "\n"),
        ("[ab日]", "ab日"),
        (r"[^\n]", "ab"),
    ];
    const LOOKS: &[&str] = &["^", "$", r"\b", r"\B", r"\A", r"\z"];

    fn gen(rng: &mut Rng, depth: u32) -> Node {
        let leaf = depth == 0 || rng.below(3) == 0;
        match if leaf { rng.below(20) } else { 20 + rng.below(4) } {
            0..=11 => Node::Lit(rng.pick(LITS)),
            12..=17 => {
                let (class, members) = rng.pick(CLASSES);
                Node::Class(class, members)
            }
            18 | 19 => Node::Look(rng.pick(LOOKS)),
            20 => Node::Cat((0..2 + rng.below(3)).map(|_| gen(rng, depth - 1)).collect()),
            21 => Node::Alt((0..2 + rng.below(2)).map(|_| gen(rng, depth - 1)).collect()),
            22 => {
                let (min, max) = rng.pick(&[
                    (0, None),
                    (1, None),
                    (0, Some(1)),
                    (2, Some(2)),
                    (1, Some(3)),
                    (2, None),
                    (2, Some(5)),
                    (3, Some(3)),
                ]);
                Node::Rep(Box::new(gen(rng, depth - 1)), min, max)
            }
            _ => Node::Group(Box::new(gen(rng, depth - 1)), rng.pick(&["", "", "i", "-i"])),
        }
    }

    impl Node {
        fn render(&self) -> String {
            match self {
                Node::Lit(s) => regex_syntax::escape(s).replace('\n', r"\n"),
                Node::Class(class, _) => class.to_string(),
                Node::Look(look) => look.to_string(),
                Node::Cat(parts) => parts.iter().map(|p| format!("(?:{})", p.render())).collect(),
                Node::Alt(alts) => alts.iter().map(Node::render).collect::<Vec<_>>().join("|"),
                Node::Rep(sub, min, max) => {
                    let op = match (min, max) {
                        (0, None) => "*".to_string(),
                        (1, None) => "+".to_string(),
                        (0, Some(1)) => "?".to_string(),
                        (n, None) => format!("{{{n},}}"),
                        (n, Some(m)) if n == m => format!("{{{n}}}"),
                        (n, Some(m)) => format!("{{{n},{m}}}"),
                    };
                    format!("(?:{}){op}", sub.render())
                }
                Node::Group(sub, "") => format!("({})", sub.render()),
                Node::Group(sub, flags) => format!("(?{flags}:{})", sub.render()),
            }
        }

        fn sample(&self, rng: &mut Rng, out: &mut String) {
            match self {
                Node::Lit(s) => out.push_str(s),
                Node::Class(_, members) => out.push(rng.pick(&members.chars().collect::<Vec<_>>())),
                Node::Look(_) => {}
                Node::Cat(parts) => parts.iter().for_each(|p| p.sample(rng, out)),
                Node::Alt(alts) => alts[rng.below(alts.len())].sample(rng, out),
                Node::Rep(sub, min, max) => {
                    let top = max.unwrap_or(min + 2);
                    for _ in 0..*min + rng.below((top - min + 1) as usize) as u32 {
                        sub.sample(rng, out);
                    }
                }
                Node::Group(sub, _) => sub.sample(rng, out),
            }
        }
    }

    /// A text around a sample of `node`, its letters sometimes changed to another case
    /// (including the non-ASCII ones simple case folding knows), or random text alone.
    fn text(rng: &mut Rng, node: &Node) -> String {
        const NOISE: &[char] =
            &['a', 'b', 'c', 'k', 's', 'f', 'o', 'B', 'r', ' ', 'x', '\n', '\r', 'ß', '日', '_', '0'];
        let noise = |rng: &mut Rng, n: usize| (0..rng.below(n)).map(|_| rng.pick(NOISE)).collect::<String>();
        if rng.below(4) == 0 {
            return noise(rng, 20);
        }
        let mut sample = String::new();
        node.sample(rng, &mut sample);
        let changed: String = sample
            .chars()
            .map(|c| match (rng.below(4), c) {
                (0, 's') => 'ſ',
                (0, 'k') => '\u{212A}',
                (0, 'ß') => 'ẞ',
                (0 | 1, c) if c.is_ascii_lowercase() => c.to_ascii_uppercase(),
                (0 | 1, c) if c.is_ascii_uppercase() => c.to_ascii_lowercase(),
                (_, c) => c,
            })
            .collect();
        let sample = if rng.below(2) == 0 { sample } else { changed };
        format!("{}{sample}{}", noise(rng, 6), noise(rng, 6))
    }

    /// Whenever grep's matcher finds a match in a text, the plan admits the text; and
    /// the plan turns away a good share of the texts that hold none.
    #[test]
    fn the_plan_admits_every_text_the_matcher_matches() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut patterns, mut cases, mut matched, mut unmatched, mut rejected, mut all) = (0, 0, 0, 0, 0, 0);
        // Texts that hold no match, for patterns whose plan is not `All`, and how many the
        // plan rejected.
        let (mut planned_unmatched, mut planned_rejected) = (0, 0);
        for _ in 0..1200 {
            let node = gen(&mut rng, 3);
            let pattern = format!("{}{}", if rng.below(6) == 0 { "(?i)" } else { "" }, node.render());
            let (case_insensitive, multiline) = (rng.below(4) == 0, rng.below(2) == 0);
            let Some(matcher) = matcher(&pattern, case_insensitive, multiline) else { continue };
            let query = plan(&pattern, case_insensitive, multiline);
            patterns += 1;
            all += usize::from(query == Query::All);
            for _ in 0..16 {
                let text = text(&mut rng, &node);
                let set = trigrams_of(text.as_bytes());
                let admitted = query.admits(&|t| set.contains(&t));
                cases += 1;
                if matcher.is_match(text.as_bytes()).unwrap() {
                    matched += 1;
                    assert!(
                        admitted,
                        "{pattern:?} (i: {case_insensitive}, multiline: {multiline}) matches {text:?}, plan {query:?}"
                    );
                } else {
                    unmatched += 1;
                    rejected += usize::from(!admitted);
                    if query != Query::All {
                        planned_unmatched += 1;
                        planned_rejected += usize::from(!admitted);
                    }
                }
            }
        }
        eprintln!(
            "{patterns} patterns ({all} planned as All), {cases} texts: {matched} matched, \
             {rejected} of the {unmatched} that did not match were rejected by the plan \
             ({planned_rejected} of {planned_unmatched} where the plan was not All)"
        );
        assert!(patterns > 1000 && matched > cases / 5, "the generator must exercise the matcher");
        assert!(rejected * 4 > unmatched, "the plan must turn away a good share of texts");
        assert!(planned_rejected * 3 > planned_unmatched, "a plan that is not All must turn away most texts");
    }
}
