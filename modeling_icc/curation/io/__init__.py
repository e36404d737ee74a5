"""Reading and writing caption tables in the formats the field uses (text, JSONL, CSV/TSV,
parquet, webdataset, DataComp, GBC)."""
