// Implementation pending (being written in this change).
