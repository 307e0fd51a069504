#ifndef CHUNKPLAN_SERVER_SERVICE_MODEL_NOTES_H_
#define CHUNKPLAN_SERVER_SERVICE_MODEL_NOTES_H_

// ModelNotes: what a call keeps of the model its request named, from its
// description to its answer (plain C++: the call record carries it).

#include <string>
#include <vector>

namespace chunkplan::service {

// What an answer says of the model a request named (ModelReport): its type
// and class, and its description's warnings (config keys ignored that look
// like known ones). Empty for a request of numels.
struct ModelNotes {
  std::string model_type;
  std::string architecture;
  std::vector<std::string> warnings;
};

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_MODEL_NOTES_H_
