-- The gate each snapshot's stage works toward (spec §4).
CREATE OR REPLACE MACRO own_gate(stage) AS
    CASE stage WHEN 'open' THEN 'session' WHEN 'converging' THEN 'manifest' ELSE 'move' END;
