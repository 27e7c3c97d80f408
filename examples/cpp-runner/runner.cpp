// An exec-protocol runner in C++ (protocol version 1, see harness/backends/external.py):
// OpenVINO's C++ API (ov::Core) on the CPU device, built against the headers and libraries the
// `openvino` Python wheel ships. One JSON request a line on stdin, one JSON reply a line on
// stdout; tensors are raw little-endian files, so no protobuf is needed. Build: ./build.sh
#include <openvino/openvino.hpp>

#include <cctype>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

// -- a small JSON value: enough for the protocol's requests ---------------------------------
struct Json {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    bool b = false;
    double n = 0;
    std::string s;
    std::vector<Json> a;
    std::map<std::string, Json> o;
    const Json& operator[](const std::string& key) const {
        static const Json none;
        auto it = o.find(key);
        return it == o.end() ? none : it->second;
    }
};

struct Parser {
    const std::string& t;
    size_t i = 0;
    explicit Parser(const std::string& text) : t(text) {}
    void ws() { while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i; }
    char peek() { ws(); if (i >= t.size()) throw std::runtime_error("unexpected end of JSON"); return t[i]; }
    void expect(char c) { if (peek() != c) throw std::runtime_error(std::string("expected '") + c + "' in JSON"); ++i; }
    Json value() {
        char c = peek();
        Json v;
        if (c == '{') {
            v.kind = Json::Object; ++i;
            if (peek() == '}') { ++i; return v; }
            for (;;) {
                std::string key = str();
                expect(':');
                v.o[key] = value();
                if (peek() == ',') { ++i; continue; }
                expect('}'); return v;
            }
        }
        if (c == '[') {
            v.kind = Json::Array; ++i;
            if (peek() == ']') { ++i; return v; }
            for (;;) {
                v.a.push_back(value());
                if (peek() == ',') { ++i; continue; }
                expect(']'); return v;
            }
        }
        if (c == '"') { v.kind = Json::String; v.s = str(); return v; }
        if (t.compare(i, 4, "true") == 0) { i += 4; v.kind = Json::Bool; v.b = true; return v; }
        if (t.compare(i, 5, "false") == 0) { i += 5; v.kind = Json::Bool; return v; }
        if (t.compare(i, 4, "null") == 0) { i += 4; return v; }
        size_t used = 0;
        v.kind = Json::Number;
        v.n = std::stod(t.substr(i), &used);
        i += used;
        return v;
    }
    std::string str() {
        expect('"');
        std::string out;
        while (i < t.size() && t[i] != '"') {
            char c = t[i++];
            if (c != '\\') { out += c; continue; }
            char e = t[i++];
            switch (e) {
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'u': {  // paths and names: encode the code point as UTF-8 (no surrogate pairs)
                    unsigned cp = std::stoul(t.substr(i, 4), nullptr, 16);
                    i += 4;
                    if (cp < 0x80) out += static_cast<char>(cp);
                    else if (cp < 0x800) { out += static_cast<char>(0xC0 | (cp >> 6)); out += static_cast<char>(0x80 | (cp & 0x3F)); }
                    else { out += static_cast<char>(0xE0 | (cp >> 12)); out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
                           out += static_cast<char>(0x80 | (cp & 0x3F)); }
                    break;
                }
                default: out += e;
            }
        }
        expect('"');
        return out;
    }
};

std::string quote(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') { out += '\\'; out += static_cast<char>(c); }
        else if (c < 0x20) { char buf[8]; std::snprintf(buf, sizeof buf, "\\u%04x", c); out += buf; }
        else out += static_cast<char>(c);
    }
    return out + "\"";
}

std::string failure(const std::string& status, const std::string& message) {
    return "{\"status\": " + quote(status) + ", \"message\": " + quote(message) + "}";
}

// -- dtypes: the protocol's numpy names <-> OpenVINO element types ---------------------------
const std::vector<std::pair<std::string, ov::element::Type>>& dtypes() {
    static const std::vector<std::pair<std::string, ov::element::Type>> table = {
        {"float32", ov::element::f32}, {"float64", ov::element::f64}, {"float16", ov::element::f16},
        {"bfloat16", ov::element::bf16}, {"int8", ov::element::i8}, {"int16", ov::element::i16},
        {"int32", ov::element::i32}, {"int64", ov::element::i64}, {"uint8", ov::element::u8},
        {"uint16", ov::element::u16}, {"uint32", ov::element::u32}, {"uint64", ov::element::u64},
        {"bool", ov::element::boolean}};
    return table;
}

bool to_element(const std::string& name, ov::element::Type& out) {
    for (const auto& [n, type] : dtypes()) if (n == name) { out = type; return true; }
    return false;
}

std::string from_element(const ov::element::Type& type) {
    for (const auto& [n, t] : dtypes()) if (t == type) return n;
    throw std::runtime_error("unsupported: output element type " + type.get_type_name() + " has no protocol dtype here");
}

// OpenVINO's messages: an operator or type it lacks reads as "unsupported"
bool lacks(const std::string& text) {
    std::string low = text;
    for (auto& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return low.find("not supported") != std::string::npos || low.find("is not implemented") != std::string::npos ||
           text.find("No conversion rule") != std::string::npos || text.find("OpConversionFailure") != std::string::npos ||
           low.find("unsupported") != std::string::npos;
}

struct Runner {
    ov::Core core;
    std::map<std::string, ov::CompiledModel> sessions;
    int count = 0;
    // options: device (default CPU) and precision (default f32: on CPUs with bf16 units
    // OpenVINO would otherwise compute float32 models in bfloat16), as the Python plug-in
    std::string device = "CPU", precision = "f32";
    int threads = 0;  // 0: OpenVINO chooses; the harness sends its per-worker share of the cores

    std::string hello(const Json& req) {
        if (req["protocol"].n != 1) return failure("error", "this runner speaks protocol 1");
        if (req["options"]["device"].kind == Json::String) device = req["options"]["device"].s;
        if (req["options"]["precision"].kind == Json::String) precision = req["options"]["precision"].s;
        if (req["options"]["threads"].kind == Json::Number) threads = static_cast<int>(req["options"]["threads"].n);
        const ov::Version v = ov::get_openvino_version();
        return std::string("{\"status\": \"ok\", \"protocol\": 1, \"name\": \"openvino-cpp\", \"version\": ") + quote(v.buildNumber) +
               ", \"environment\": {\"device\": " + quote(device) + ", \"precision\": " + quote(precision) +
               ", \"threads\": " + std::to_string(threads) + ", \"api\": \"ov::Core C++\"}}";
    }

    std::string prepare(const Json& req) {
        std::shared_ptr<ov::Model> model;
        try {
            model = core.read_model(req["model"].s);
        } catch (const std::exception& e) {  // the ONNX frontend refused the model
            return failure(lacks(e.what()) ? "unsupported" : "rejected", e.what());
        }
        try {
            ov::AnyMap config{{"INFERENCE_PRECISION_HINT", precision}};
            if (threads > 0) config["INFERENCE_NUM_THREADS"] = threads;
            ov::CompiledModel compiled = core.compile_model(model, device, config);
            std::string key = std::to_string(++count);
            sessions.emplace(key, compiled);
            return "{\"status\": \"ok\", \"session\": " + quote(key) + "}";
        } catch (const std::exception& e) {
            return failure(lacks(e.what()) ? "unsupported" : "error", e.what());
        }
    }

    std::string run(const Json& req) {
        auto it = sessions.find(req["session"].s);
        if (it == sessions.end()) return failure("error", "unknown session " + req["session"].s);
        ov::CompiledModel& compiled = it->second;
        ov::InferRequest infer = compiled.create_infer_request();
        const auto in_ports = compiled.inputs();
        for (size_t k = 0; k < req["inputs"].a.size(); ++k) {
            const Json& in = req["inputs"].a[k];
            ov::element::Type type;
            if (in["dtype"].kind != Json::String || !to_element(in["dtype"].s, type))
                return failure("unsupported", "input " + in["name"].s + ": this runner takes tensors of numeric or bool dtypes only");
            ov::Shape shape;
            for (const Json& d : in["shape"].a) shape.push_back(static_cast<size_t>(d.n));
            ov::Tensor tensor(type, shape);
            std::ifstream file(in["file"].s, std::ios::binary);
            std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
            if (bytes.size() != tensor.get_byte_size())
                return failure("error", "input " + in["name"].s + ": file size does not match dtype and shape");
            std::copy(bytes.begin(), bytes.end(), static_cast<char*>(tensor.data()));
            // by name; by position (the graph's input order) where OpenVINO dropped the name, as it
            // does when an input flows straight to an output, and every input is still a port
            bool named = false;
            for (const auto& port : in_ports) if (port.get_names().count(in["name"].s)) { infer.set_tensor(port, tensor); named = true; break; }
            if (!named) {
                if (in_ports.size() != req["inputs"].a.size()) continue;  // an input the model does not use
                infer.set_input_tensor(k, tensor);
            }
        }
        infer.infer();
        std::ostringstream out;
        out << "{\"status\": \"ok\", \"outputs\": [";
        const auto ports = compiled.outputs();
        const auto& wanted = req["outputs"].a;
        for (size_t k = 0; k < ports.size(); ++k) {
            ov::Tensor tensor = infer.get_tensor(ports[k]);
            if (k < wanted.size()) {  // the graph's order by name, where OpenVINO kept the names
                for (const auto& port : ports) if (port.get_names().count(wanted[k].s)) { tensor = infer.get_tensor(port); break; }
            }
            std::string path = req["dir"].s + "/out-" + std::to_string(k) + ".bin";
            std::ofstream file(path, std::ios::binary);
            file.write(static_cast<const char*>(tensor.data()), static_cast<std::streamsize>(tensor.get_byte_size()));
            out << (k ? ", " : "") << "{\"name\": " << quote(k < wanted.size() ? wanted[k].s : "output" + std::to_string(k))
                << ", \"dtype\": " << quote(from_element(tensor.get_element_type())) << ", \"shape\": [";
            const ov::Shape shape = tensor.get_shape();
            for (size_t d = 0; d < shape.size(); ++d) out << (d ? ", " : "") << shape[d];
            out << "], \"file\": " << quote(path) << "}";
        }
        out << "]}";
        return out.str();
    }

    std::string handle(const Json& req) {
        const std::string& op = req["op"].s;
        if (op == "hello") return hello(req);
        if (op == "prepare") return prepare(req);
        if (op == "release") { sessions.erase(req["session"].s); return "{\"status\": \"ok\"}"; }
        if (op == "run") {
            try {
                return run(req);
            } catch (const std::exception& e) {
                return failure(lacks(e.what()) ? "unsupported" : "error", e.what());
            }
        }
        return failure("error", "unknown request " + op);
    }
};

int main() {
    std::ios::sync_with_stdio(false);
    Runner runner;
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        std::string reply;
        try {
            Parser parser(line);
            reply = runner.handle(parser.value());
        } catch (const std::exception& e) {
            reply = failure("error", std::string("runner: ") + e.what());
        }
        std::cout << reply << '\n' << std::flush;
    }
    return 0;
}
