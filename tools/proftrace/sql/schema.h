// The tables `proftrace export --sqlite` writes (tools/README.md, "SQL
// export", documents them with example queries). Bump kSchemaVersion when a
// column changes meaning or goes away; adding a column or table does not.
#pragma once

#include <string_view>

namespace proflaunch::tools::sql {

inline constexpr int kSchemaVersion = 1;

// CREATE TABLE statements, run before any row is written.
extern const std::string_view kCreateTables;
// Indexes for the joins the README shows, and the views that make them;
// built after the rows (one sort each instead of a B-tree update per row).
extern const std::string_view kCreateIndexesAndViews;

}  // namespace proflaunch::tools::sql
