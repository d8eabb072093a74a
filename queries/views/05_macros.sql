-- Markup the page does not show as written: inline HTML tags, a link's target (its text stays),
-- backslash escapes and the character references people type (`&nbsp;`, `&#32;`, `&amp;`).
-- `<em>security</em>` for `*security*` was no change of a title (found by a hunt).
CREATE OR REPLACE MACRO shown_markup(t) AS replace(replace(replace(replace(replace(replace(
    regexp_replace(regexp_replace(regexp_replace(t,
        '</?[A-Za-z][A-Za-z0-9-]*(?:[ \t][^<>]*)?/?>', '', 'g'),
        '!?\[([^\]]*)\]\([^()]*\)', '\1', 'g'),
        '\\([!-/:-@\[-`{-~])', '\1', 'g'),
    '&nbsp;', ' '), '&#32;', ' '), '&#160;', ' '), '&amp;', '&'), '&lt;', '<'), '&gt;', '>');

-- Text as a rendered page shows its words, for comparing along a history: runs of white space
-- read as one space, and emphasis marks (`*`, and `_` at a word's edge, not inside snake_case)
-- and code-span backticks are dropped, so a doubled space or a word put in bold or in a code
-- span is no retitle or rewrite (a code span was; found by a hunt); its markup is read as
-- shown_markup reads it. Struck-through words are not shown words: the readers drop them.
CREATE OR REPLACE MACRO as_shown(t) AS trim(regexp_replace(regexp_replace(regexp_replace(
    regexp_replace(replace(replace(shown_markup(t), '*', ''), '`', ''),
        '(^|[^\pL\pN])_+', '\1', 'g'), '_+([^\pL\pN]|$)', '\1', 'g'),
    -- What the page shows as nothing, then every space it shows as one (RE2's \s is ASCII's
    -- alone: a no-break space made an unchanged title "retitled"; found by a hunt).
    '[\x{00ad}\x{200b}-\x{200d}\x{2060}\x{feff}]', '', 'g'),
    '[\s\x{00a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]+', ' ', 'g'));

-- A ledger entry's text without a reversal note in it (`… Reversed by D2.`): the note is an
-- annotation, never a rewrite (session schema), as it is in the heading or on its own line.
-- The dash or arrow that leads into the note, emphasis split around its words and a date
-- after it (`— Reversed by D3.`, `(Reversed by D3 on 2026-07-10.)`, `**Reversed** by D3`) are
-- the note's too: left behind, they made the annotation a rewrite (found by a hunt).
CREATE OR REPLACE MACRO without_reversal(t) AS as_shown(regexp_replace(
    shown_markup(t), '(?:[ \t]*(?:[—–]|--?|→|->|=>))?[ \t]*[*_]*[(\[]?[*_]*'
        -- The phrase as the ledger's reader takes it (`Reversed-by`, `by:**`, `(D3)`, `#D3`)…
        || 'reversed[*_`~]*(?:[ \t]+|-)[*_`~]*by\b[ \t:*_`~\[(#]*'
        -- …with every ID it lists (`D3 and D4`, `D3, D4`: the second was left behind)…
        || 'D-?[0-9]+\b(?:[ \t*_`)\]]*(?:[,;&/]|\band\b|\bor\b)?[ \t*_`\[(#]*D-?[0-9]+\b)*'
        -- …and what closes it: brackets, a clause of when, a date, punctuation.
        || '[*_`)\]]*(?:[ \t]*,?[ \t]*(?:(?:on|in|at|since)[ \t]+[^)\].;,]*'
        || '|\(?[0-9]{4}-[0-9]{2}-[0-9]{2}\)?))?[.;,]?[)\]]?[*_]*[.;,]?', '', 'gi'));

-- The Wilson score interval for k failures out of n at normal quantile z (null when n is 0):
-- the one definition every rate's interval and every comparison in census uses.
-- At k = 0 (k = n) the bound is exactly 0 (1), never a rounding error that WHERE rate_lo > 0
-- would take for a failure.
CREATE OR REPLACE MACRO wilson_lo(k, n, z) AS
    CASE WHEN n > 0 AND k = 0 THEN 0.0 WHEN n > 0 THEN greatest(0.0,
        (k / n + z * z / (2 * n) - z * sqrt(k / n * (1 - k / n) / n + z * z / (4 * n * n)))
        / (1 + z * z / n))
    END;
CREATE OR REPLACE MACRO wilson_hi(k, n, z) AS
    CASE WHEN n > 0 AND k = n THEN 1.0 WHEN n > 0 THEN least(1.0,
        (k / n + z * z / (2 * n) + z * sqrt(k / n * (1 - k / n) / n + z * z / (4 * n * n)))
        / (1 + z * z / n))
    END;

-- Newcombe's interval (1998) for a difference of proportions p2 − p1, at normal quantile z,
-- built from the Wilson intervals above. Two samples (his method 10): f1 of n1, f2 of n2.
CREATE OR REPLACE MACRO newcombe_lo(f1, n1, f2, n2, z) AS
    f2 / n2 - f1 / n1 - sqrt((f2 / n2 - wilson_lo(f2, n2, z)) ^ 2
        + (wilson_hi(f1, n1, z) - f1 / n1) ^ 2);
CREATE OR REPLACE MACRO newcombe_hi(f1, n1, f2, n2, z) AS
    f2 / n2 - f1 / n1 + sqrt((wilson_hi(f2, n2, z) - f2 / n2) ^ 2
        + (f1 / n1 - wilson_lo(f1, n1, z)) ^ 2);

-- Paired (his method 10 for paired data): a both fail, b only the first, c only the second,
-- d neither; p1 = (a+b)/n, p2 = (a+c)/n; φ is the correlation, a positive one shrunk by n/2.
CREATE OR REPLACE MACRO newcombe_phi(a, b, c, d) AS
    CASE WHEN (a + b) * (c + d) * (a + c) * (b + d) = 0 THEN 0.0
        ELSE CASE WHEN a * d - b * c > 0 THEN greatest(a * d - b * c - (a + b + c + d) / 2, 0.0)
            ELSE a * d - b * c END
            / sqrt((a + b) * (c + d) * (a + c) * (b + d))
    END;
CREATE OR REPLACE MACRO newcombe_paired_lo(a, b, c, d, z) AS
    (a + c) / (a + b + c + d) - (a + b) / (a + b + c + d) - sqrt(greatest(
        ((a + c) / (a + b + c + d) - wilson_lo(a + c, a + b + c + d, z)) ^ 2
        - 2 * newcombe_phi(a, b, c, d)
            * ((a + c) / (a + b + c + d) - wilson_lo(a + c, a + b + c + d, z))
            * (wilson_hi(a + b, a + b + c + d, z) - (a + b) / (a + b + c + d))
        + (wilson_hi(a + b, a + b + c + d, z) - (a + b) / (a + b + c + d)) ^ 2, 0.0));
CREATE OR REPLACE MACRO newcombe_paired_hi(a, b, c, d, z) AS
    (a + c) / (a + b + c + d) - (a + b) / (a + b + c + d) + sqrt(greatest(
        (wilson_hi(a + c, a + b + c + d, z) - (a + c) / (a + b + c + d)) ^ 2
        - 2 * newcombe_phi(a, b, c, d)
            * (wilson_hi(a + c, a + b + c + d, z) - (a + c) / (a + b + c + d))
            * ((a + b) / (a + b + c + d) - wilson_lo(a + b, a + b + c + d, z))
        + ((a + b) / (a + b + c + d) - wilson_lo(a + b, a + b + c + d, z)) ^ 2, 0.0));
