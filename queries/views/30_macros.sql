-- The gate each snapshot's stage works toward (spec §4).
CREATE OR REPLACE MACRO own_gate(stage) AS
    CASE stage WHEN 'open' THEN 'session' WHEN 'converging' THEN 'manifest' ELSE 'move' END;

-- The 95% Wilson score interval for `failed` out of `n` (null when n is 0).
CREATE OR REPLACE MACRO wilson_lo(failed, n) AS
    CASE WHEN n > 0 THEN
        (failed / n + 1.959963984540054 ^ 2 / (2 * n)
         - 1.959963984540054 * sqrt(failed / n * (1 - failed / n) / n + 1.959963984540054 ^ 2 / (4 * n * n)))
        / (1 + 1.959963984540054 ^ 2 / n)
    END;
CREATE OR REPLACE MACRO wilson_hi(failed, n) AS
    CASE WHEN n > 0 THEN
        (failed / n + 1.959963984540054 ^ 2 / (2 * n)
         + 1.959963984540054 * sqrt(failed / n * (1 - failed / n) / n + 1.959963984540054 ^ 2 / (4 * n * n)))
        / (1 + 1.959963984540054 ^ 2 / n)
    END;

