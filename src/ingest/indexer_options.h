#pragma once

// The live indexer's options moved to ingest/chain/indexer_options.h; this name stays for
// config/ and other existing includes.

#include "ingest/chain/indexer_options.h"

namespace adserver::ingest {

using IndexerOptions = chain::IndexerOptions;

}  // namespace adserver::ingest
