#include "core/error.h"
#include "jobs.h"
#include "predict/predict.h"
#include "report/prediction.h"

#include <cstdio>

namespace shardscope::worker {

int runPredict(const std::vector<std::string>& args) {
    if (args.size() != 2 || args[0] != "--predict") {
        std::fprintf(stderr,
                     "shardscope-worker: --predict takes one request (JSON) and no other flag\n");
        return 2;
    }
    const report::Parsed<std::vector<theory::Scenario>> request =
        report::parsePredictRequest(args[1]);
    if (!request) {
        std::fprintf(stderr, "shardscope-worker: --predict: %s\n", request.error.c_str());
        return 2;
    }
    std::vector<theory::PeakPrediction> answers;
    try {
        for (const theory::Scenario& s : *request.value) {
            theory::validate(s);
            answers.push_back(predict::predictPeak(s));
        }
    } catch (const Error& e) {
        std::fprintf(stderr, "shardscope-worker: --predict: %s\n", e.what());
        return e.isUserInput() ? 2 : 1;
    }
    std::printf("%s\n", report::predictAnswerJson(answers).dump().c_str());
    return 0;
}

} // namespace shardscope::worker
