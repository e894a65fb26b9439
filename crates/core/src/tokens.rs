//! Exact token counts with the o200k BPE (GPT-4o and later), data embedded in the binary.
//!
//! The tokenizer is GitHub's `bpe` family: counting is linear in the input, also for
//! one long string that the pre-tokenizer cannot split.

/// Counts the o200k tokens of `text`.
pub fn count_tokens(text: &str) -> usize {
    bpe_openai::o200k_base().count(text)
}

/// The most leading lines of `text` whose tokens, counted line by line, stay within `limit`.
///
/// Used to tell a model which `limit` would have fit after a page was refused.
pub fn lines_within(text: &str, limit: usize) -> usize {
    let tokenizer = bpe_openai::o200k_base();
    let mut used = 0usize;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        used += tokenizer.count(line);
        if used > limit {
            return i;
        }
    }
    text.split_inclusive('\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_counts() {
        assert_eq!(count_tokens(""), 0);
        assert_eq!(count_tokens("Hello, world!"), 4);
        assert!(count_tokens(&"a".repeat(10_000)) > 0);
    }

    #[test]
    fn lines_within_limit() {
        let text = "hello world\n".repeat(100);
        let per_line = count_tokens("hello world\n");
        assert_eq!(lines_within(&text, per_line * 10), 10);
        assert_eq!(lines_within(&text, usize::MAX), 100);
        assert_eq!(lines_within(&text, 0), 0);
    }
}
