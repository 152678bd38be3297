// tests/fuzz/document_page_reader.h — sync-store's page reader as it was before it streamed
// (a whole nlohmann document, then a walk of it), kept as codec_fuzz's oracle.
#ifndef QUEREUS_TESTS_FUZZ_DOCUMENT_PAGE_READER_H_
#define QUEREUS_TESTS_FUZZ_DOCUMENT_PAGE_READER_H_

#include <optional>
#include <string_view>
#include <vector>

#include "change_set.h"

namespace quereus::sync {

// As sets_from_json and change_from_json (json_codec.h), through a document.
std::vector<ChangeSet> document_sets_from_json(std::string_view text, std::optional<SnapshotChunk>* snapshot,
                                               std::optional<PushOrigin>* origin, std::vector<Hlc>* frontier);
Change document_change_from_json(std::string_view text);

}  // namespace quereus::sync

#endif  // QUEREUS_TESTS_FUZZ_DOCUMENT_PAGE_READER_H_
