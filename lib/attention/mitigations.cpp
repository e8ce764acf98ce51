// The mitigations table (options.hpp): each mitigation's arguments, checks, effect on a
// configuration and the plugin kernel parameters that ask a kernel for the same.
#include <stdexcept>
#include <utility>

#include "emulation/did_you_mean.hpp"
#include "emulation/excerpt.hpp"
#include "lib/attention/options.hpp"
#include "lib/limits/strict_parse.hpp"

namespace simprec::attention {
namespace {

int parse_bits(const std::string& text, std::string_view mitigation) {
  return static_cast<int>(
      limits::parse_integer(text, 1, 32, std::string(mitigation) + " random bit count"));
}

std::vector<Mitigation> make_mitigations() {
  std::vector<Mitigation> t;
  t.push_back(Mitigation{
      "beta-rowmax",
      "paper A's fix: when a block's row max is repeated within EPS (on scaled scores), subtract "
      "BETA times the max (or 0 for a negative max) instead of the max",
      {{"BETA", "the factor, finite and > 1", "2"},
       {"EPS", "the repeat tolerance on scaled scores, finite and >= 0", "0.001"}},
      [](AttentionConfig& c, std::span<const std::string> a) {
        const double beta = parse_finite_number(a[0], "beta-rowmax beta");
        const double eps = parse_finite_number(a[1], "beta-rowmax eps");
        if (!(beta > 1)) {
          throw std::invalid_argument("beta-rowmax beta '" + a[0] + "': expected a number > 1");
        }
        if (!(eps >= 0)) {
          throw std::invalid_argument("beta-rowmax eps '" + a[1] + "': expected a number >= 0");
        }
        c.beta_rowmax.enabled = true;
        c.beta_rowmax.beta = beta;
        c.beta_rowmax.eps = eps;
      },
      [](std::span<const std::string> a) {
        return std::vector<KernelParameter>{{"beta_rowmax", true},
                                            {"beta", parse_finite_number(a[0], "beta-rowmax beta")},
                                            {"eps", parse_finite_number(a[1], "beta-rowmax eps")}};
      }});
  const auto sr_p_kernel = [](std::span<const std::string> a) {
    return std::vector<KernelParameter>{
        {"sr_p_bits", static_cast<int64_t>(parse_bits(a[0], "sr-p"))}};
  };
  t.push_back(Mitigation{"sr-p",
                         "stochastic rounding of P at p_cast with BITS random bits (1..32)",
                         {{"BITS", "random bits, 1..32", "32"}},
                         [](AttentionConfig& c, std::span<const std::string> a) {
                           make_site_stochastic(c, Site::kPCast, parse_bits(a[0], "sr-p"));
                         },
                         sr_p_kernel});
  t.push_back(Mitigation{"sr-p-tiled",
                         "sr-p with the random bits laid out as the GPU kernels hold their tiles "
                         "(emulation/tiled_random.hpp); BITS divides 32",
                         {{"BITS", "random bits: 1, 2, 4, 8, 16 or 32", "32"}},
                         [](AttentionConfig& c, std::span<const std::string> a) {
                           const int bits = parse_bits(a[0], "sr-p-tiled");
                           if (32 % bits != 0) {
                             throw std::invalid_argument("sr-p-tiled: the bit count " + a[0] +
                                                         " must divide 32 (1, 2, 4, 8, 16, 32)");
                           }
                           make_site_stochastic(c, Site::kPCast, bits);
                           c.tiled_random = true;
                         },
                         sr_p_kernel});
  t.push_back(Mitigation{
      "sr-o",
      "stochastic rounding, with BITS random bits, of every O rounding in a format narrower than "
      "fp32 (pv_acc, o_update, o_rescale, o_norm, o_out)",
      {{"BITS", "random bits, 1..32", "32"}},
      [](AttentionConfig& c, std::span<const std::string> a) {
        const int bits = parse_bits(a[0], "sr-o");
        for (Site s : {Site::kPvAcc, Site::kOUpdate, Site::kORescale, Site::kONorm, Site::kOOut}) {
          if (c.site(s).format.precision() < formats::fp32.precision()) {
            make_site_stochastic(c, s, bits);
          }
        }
      },
      nullptr});
  t.push_back(Mitigation{
      "hp",
      "higher precision at one site: FORMAT, or fp32 when the site is narrower, else fp64",
      {{"SITE", "a rounding site (required)", ""}, {"FORMAT", "the site's new format", ""}},
      [](AttentionConfig& c, std::span<const std::string> a) {
        if (a[0].empty()) throw std::invalid_argument("hp takes a site: hp:SITE[:FORMAT]");
        SiteSpec& spec = c.site(parse_site(a[0]));
        if (!a[1].empty()) {
          spec.format = parse_format(a[1]);
        } else {
          spec.format =
              spec.format.precision() < formats::fp32.precision() ? formats::fp32 : formats::fp64;
        }
      },
      nullptr});
  t.push_back(Mitigation{"delta-dpp",
                         "D from rowsum(dP o P) in the flash backward pass (paper A's stable "
                         "variant; the option delta=dpp)",
                         {},
                         [](AttentionConfig& c, std::span<const std::string>) {
                           c.delta = find_strategy<DeltaMode>("dpp");
                         },
                         nullptr});
  return t;
}

std::vector<std::string_view> split_colons(std::string_view text) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t at = text.find(':', start);
    parts.push_back(text.substr(start, at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return parts;
}

}  // namespace

std::string mitigation_syntax() {
  std::string known;
  for (const Mitigation& m : mitigations()) {
    std::string syntax(m.name);
    for (const auto& a : m.arguments) {
      syntax += a.default_text.empty() && a.name == "SITE" ? ":" + std::string(a.name)
                                                           : "[:" + std::string(a.name) + "]";
    }
    known += (known.empty() ? "" : ", ") + syntax;
  }
  return known;
}

namespace {

// The mitigation named by text's first part and its arguments with defaults filled in.
std::pair<const Mitigation*, std::vector<std::string>> resolve(std::string_view text) {
  const auto parts = split_colons(text);
  const Mitigation* m = find_mitigation(parts[0]);
  if (!m) {
    std::vector<std::string> names;
    for (const Mitigation& known : mitigations()) names.emplace_back(known.name);
    throw std::invalid_argument("unknown mitigation '" + excerpt(text) + "'" +
                                did_you_mean(parts[0], names) + " (known: " + mitigation_syntax() +
                                ")");
  }
  if (parts.size() - 1 > m->arguments.size()) {
    throw std::invalid_argument("mitigation '" + excerpt(text) + "' has " +
                                std::to_string(parts.size() - 1) + " arguments; " +
                                std::string(m->name) + " takes at most " +
                                std::to_string(m->arguments.size()));
  }
  std::vector<std::string> args;
  for (size_t i = 0; i < m->arguments.size(); ++i) {
    if (i + 1 < parts.size()) {
      if (parts[i + 1].empty()) {
        throw std::invalid_argument("mitigation '" + excerpt(text) + "': empty " +
                                    std::string(m->arguments[i].name));
      }
      args.emplace_back(parts[i + 1]);
    } else {
      args.emplace_back(m->arguments[i].default_text);
    }
  }
  return {m, std::move(args)};
}

}  // namespace

std::span<const Mitigation> mitigations() {
  static const std::vector<Mitigation> table = make_mitigations();
  return table;
}

const Mitigation* find_mitigation(std::string_view name) {
  for (const Mitigation& m : mitigations()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

void apply_mitigation(AttentionConfig& config, std::string_view text) {
  const auto [m, args] = resolve(text);
  m->apply(config, args);
  config.mitigations.emplace_back(text);
}

std::string canonical_mitigation(std::string_view text) {
  const auto [m, args] = resolve(text);
  AttentionConfig scratch;
  m->apply(scratch, args);  // validates the arguments
  std::string out(m->name);
  // Numbers in their shortest round-trip form; trailing absent optional arguments dropped.
  size_t last = args.size();
  while (last > 0 && args[last - 1].empty()) --last;
  for (size_t i = 0; i < last; ++i) {
    const auto number = limits::parse_finite_double(args[i]);
    out += ":" + (number ? limits::shortest_text(*number) : args[i]);
  }
  return out;
}

std::vector<KernelParameter> mitigation_kernel_parameters(std::string_view text) {
  const auto [m, args] = resolve(text);
  if (!m->kernel_parameters) {
    std::string known;
    for (const Mitigation& k : mitigations()) {
      if (k.kernel_parameters) known += (known.empty() ? "" : ", ") + std::string(k.name);
    }
    throw std::invalid_argument("mitigation '" + excerpt(text) +
                                "' cannot be passed to a plugin kernel (known: " + known + ")");
  }
  AttentionConfig scratch;
  m->apply(scratch, args);  // validates the arguments
  return m->kernel_parameters(args);
}

std::span<const std::string_view> kernel_parameter_names() {
  static const std::string_view names[] = {"causal", "scale",     "beta_rowmax", "beta",
                                           "eps",    "sr_p_bits", "seed"};
  return names;
}

std::string mitigations_markdown() {
  std::string out =
      "| mitigation | arguments (default) | kernel parameters | what it does |\n"
      "| --- | --- | --- | --- |\n";
  for (const Mitigation& m : mitigations()) {
    std::string args;
    for (const auto& a : m.arguments) {
      args += (args.empty() ? "" : "; ") + std::string(a.name) + ": " + std::string(a.doc);
      if (!a.default_text.empty()) args += " (" + std::string(a.default_text) + ")";
    }
    std::string kernel = "none";
    if (m.kernel_parameters) {
      std::vector<std::string> defaults;
      for (const auto& a : m.arguments) defaults.emplace_back(a.default_text);
      kernel.clear();
      for (const auto& p : m.kernel_parameters(defaults)) {
        kernel += (kernel.empty() ? "`" : ", `") + p.name + "`";
      }
    }
    out += "| `" + std::string(m.name) + "` | " + (args.empty() ? "none" : args) + " | " + kernel +
           " | " + std::string(m.doc) + " |\n";
  }
  return out;
}

}  // namespace simprec::attention
