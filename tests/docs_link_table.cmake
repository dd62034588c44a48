# docs_link_table: the table between the link-table markers of docs/architecture.md equals the
# one CMake wrote from its target graph (cmake/ShardScopeLinkTable.cmake). On a mismatch it
# prints the generated table, to paste between the markers.
file(READ ${DOC} doc)
file(READ ${TABLE} table)
string(FIND "${doc}" "<!-- link-table:begin -->\n" begin)
string(FIND "${doc}" "<!-- link-table:end -->" end)
if(begin EQUAL -1 OR end EQUAL -1)
  message(FATAL_ERROR "${DOC}: the <!-- link-table:begin --> / <!-- link-table:end --> markers are missing")
endif()
math(EXPR from "${begin} + 26")
math(EXPR length "${end} - ${from}")
string(SUBSTRING "${doc}" ${from} ${length} documented)
if(NOT documented STREQUAL table)
  message(FATAL_ERROR "${DOC}: the link table differs from the build's (${TABLE}); between the markers it should read:\n${table}")
endif()
message(STATUS "docs_link_table: docs/architecture.md matches the build's link graph")
