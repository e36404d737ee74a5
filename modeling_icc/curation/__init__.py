"""Curation: keep rules and the one filter plan (rules decide), caption tables and formats
(io/), and the engines that move data (engines/)."""
