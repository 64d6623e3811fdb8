"""Prints the CMake cache variables that conanfile.py's generate() sets, for
the recipe's default options ("default: ...") and with every transport on
("full: ..."), as -D options. Reads the recipe's class attributes with ast:
Conan itself need not be installed."""
import ast
import sys


def main(recipe_path):
    with open(recipe_path, encoding="utf-8") as recipe:
        tree = ast.parse(recipe.read(), recipe_path)
    recipe_class = next(node for node in tree.body if isinstance(node, ast.ClassDef))
    attributes = {}
    for node in recipe_class.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                attributes[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    generate = next(node for node in recipe_class.body
                    if isinstance(node, ast.FunctionDef) and node.name == "generate")
    used = {node.attr for node in ast.walk(generate) if isinstance(node, ast.Attribute)}
    for name in ("_transports", "_fixed_cache_variables"):
        if name not in used:
            sys.exit(f"{recipe_path}: generate() does not use {name}, so this check does not know what it sets")

    transports = attributes["_transports"]
    defaults = attributes["default_options"]
    for option in transports:
        if option not in attributes["options"]:
            sys.exit(f"{recipe_path}: transport {option} is not an option")

    def cache_variables(enabled):
        values = dict(attributes["_fixed_cache_variables"])
        for option, (variable, _, _) in transports.items():
            values[variable] = enabled(option)
        return ";".join(f"-D{name}={'ON' if value else 'OFF'}" for name, value in sorted(values.items()))

    print("default: " + cache_variables(lambda option: defaults[option]))
    print("full: " + cache_variables(lambda option: True))


if __name__ == "__main__":
    main(sys.argv[1])
