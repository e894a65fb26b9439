//! Right-to-left lines drawn in visual order, put back in logical order.
//!
//! Most writers draw Arabic and Hebrew glyph by glyph from the left, so a content stream
//! holds a right-to-left word backwards. A line is reordered the way pdf.js reorders a
//! text run: a compact form of the Unicode Bidirectional Algorithm assigns each glyph a
//! level (right-to-left letters odd, numbers and left-to-right letters even, neutrals
//! those of their neighbours), and runs are reversed from the highest level down (rule
//! L2). Reversing by those levels is its own inverse for such lines, so the visual order
//! goes back to the logical one. Glyphs stay whole: a ligature whose text is already in
//! logical order (lam-alef, "لا") is not turned around. The paragraph direction is
//! right-to-left when at least 30% of the characters are, as in pdf.js.

/// Whether `c` belongs to a right-to-left script (Hebrew, Arabic, Syriac, Thaana, N'Ko
/// and their presentation forms), digits aside.
pub(crate) fn is_rtl(c: char) -> bool {
    matches!(c as u32, 0x0590..=0x08ff | 0xfb1d..=0xfdff | 0xfe70..=0xfefe | 0x10800..=0x10fff | 0x1e800..=0x1efff)
        && !is_number(c)
}

fn is_number(c: char) -> bool {
    c.is_ascii_digit() || matches!(c as u32, 0x0660..=0x0669 | 0x06f0..=0x06f9)
}

/// Whether the first letter of `text` is right-to-left.
pub(crate) fn starts_rtl(text: &str) -> bool {
    text.chars().find(|&c| c.is_alphabetic() || is_rtl(c)).is_some_and(is_rtl)
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Class {
    /// A right-to-left letter.
    R,
    /// A left-to-right letter.
    L,
    /// A number.
    Num,
    /// Anything else: spaces, punctuation.
    N,
}

fn class(unit: &str) -> Class {
    for c in unit.chars() {
        if is_rtl(c) {
            return Class::R;
        }
        if is_number(c) {
            return Class::Num;
        }
        if c.is_alphabetic() {
            return Class::L;
        }
    }
    Class::N
}

/// `line` in logical order, given in visual order; `starts` are the byte offsets where
/// its glyphs (units that are never split) begin, ascending.
pub(crate) fn visual_to_logical(line: &str, starts: &[usize]) -> String {
    let mut bounds: Vec<usize> = std::iter::once(0)
        .chain(starts.iter().copied().filter(|&s| s > 0 && s < line.len() && line.is_char_boundary(s)))
        .collect();
    bounds.dedup();
    bounds.push(line.len());
    let units: Vec<&str> = bounds.windows(2).map(|w| &line[w[0]..w[1]]).collect();
    let classes: Vec<Class> = units.iter().map(|u| class(u)).collect();
    let total = line.chars().count();
    let rtl_chars = line.chars().filter(|&c| is_rtl(c)).count();
    if rtl_chars == 0 {
        return line.to_string();
    }
    let base: u8 = if rtl_chars * 10 >= total * 3 || total <= 4 { 1 } else { 0 };
    // The nearest letter or number on each side of each unit, for numbers and neutrals:
    // two passes, so that a long run of neutrals costs its length, not its square.
    let mut before = Vec::with_capacity(classes.len());
    let mut last = None;
    for &c in &classes {
        before.push(last);
        if c != Class::N {
            last = Some(c);
        }
    }
    let mut after = vec![None; classes.len()];
    last = None;
    for (i, &c) in classes.iter().enumerate().rev() {
        after[i] = last;
        if c != Class::N {
            last = Some(c);
        }
    }
    let strong = |i: usize, step: isize| if step < 0 { before[i] } else { after[i] };
    let levels: Vec<u8> = classes
        .iter()
        .enumerate()
        .map(|(i, &c)| match c {
            Class::R => 1,
            Class::L => {
                if base == 1 {
                    2
                } else {
                    0
                }
            }
            Class::Num => {
                let by_rtl = strong(i, -1) == Some(Class::R) || strong(i, 1) == Some(Class::R);
                if base == 1 || by_rtl {
                    2
                } else {
                    0
                }
            }
            Class::N => {
                // Numbers count as right-to-left for the neutrals between them (rule N1).
                let side = |k: Option<Class>| match k {
                    Some(Class::L) => 0,
                    Some(_) => 1,
                    None => base,
                };
                let (left, right) = (side(strong(i, -1)), side(strong(i, 1)));
                if left == right {
                    if left == 1 {
                        1
                    } else if base == 1 {
                        2
                    } else {
                        0
                    }
                } else {
                    base
                }
            }
        })
        .collect();
    let mut order: Vec<usize> = (0..units.len()).collect();
    let top = levels.iter().copied().max().unwrap_or(0);
    for level in (1..=top).rev() {
        let mut i = 0;
        while i < order.len() {
            if levels[order[i]] >= level {
                let start = i;
                while i < order.len() && levels[order[i]] >= level {
                    i += 1;
                }
                order[start..i].reverse();
            } else {
                i += 1;
            }
        }
    }
    order.iter().map(|&i| units[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each character its own glyph.
    fn chars(s: &str) -> Vec<usize> {
        s.char_indices().map(|(i, _)| i).collect()
    }

    #[test]
    fn hebrew_visual_to_logical() {
        let visual = "םולש"; // שלום drawn from the left
        assert_eq!(visual_to_logical(visual, &chars(visual)), "שלום");
    }

    #[test]
    fn a_hebrew_word_in_an_english_line() {
        let visual = "the word םולש means peace";
        assert_eq!(visual_to_logical(visual, &chars(visual)), "the word שלום means peace");
    }

    #[test]
    fn numbers_keep_their_order_inside_rtl_text() {
        // "שנת 2024 היא" (the year 2024 is) in a right-to-left line, drawn from the left.
        let visual = "איה 2024 תנש";
        assert_eq!(visual_to_logical(visual, &chars(visual)), "שנת 2024 היא");
    }

    #[test]
    fn a_glyph_of_several_letters_stays_whole() {
        // The ligature glyph's text "לא" is in logical order already.
        let visual = "בלא";
        let starts = [0, "ב".len()];
        assert_eq!(visual_to_logical(visual, &starts), "לאב");
    }

    #[test]
    fn ltr_text_is_left_alone() {
        assert_eq!(visual_to_logical("plain text 12", &chars("plain text 12")), "plain text 12");
        assert!(!starts_rtl("1 abc"));
        assert!(starts_rtl("1 \u{5d0}"));
    }

    /// The best of five timings of reordering a right-to-left line of about `n` × 20
    /// glyphs: words and numbers, and between them a dot leader of `n` neutrals (as in a
    /// table of contents).
    fn reorder_time(n: usize) -> std::time::Duration {
        let line = format!("{}{}{}", "תנש 2024 ".repeat(n), ".".repeat(n * 10), " 12 3 4 היא".repeat(n / 2));
        let starts = chars(&line);
        (0..5)
            .map(|_| {
                let t = std::time::Instant::now();
                std::hint::black_box(visual_to_logical(&line, &starts));
                t.elapsed()
            })
            .min()
            .unwrap()
    }

    #[test]
    fn reordering_is_linear_in_the_line() {
        // Four times the line takes about four times the time (a scan for the strong
        // neighbours of each neutral took sixteen times: 2x took 4.1x, 10 s -> 41 s).
        let (small, large) = (reorder_time(1_000), reorder_time(4_000));
        let ratio = large.as_secs_f64() / small.as_secs_f64();
        assert!(ratio < 8.0, "4x the line took {ratio:.2}x the time ({small:?} -> {large:?})");
    }
}
