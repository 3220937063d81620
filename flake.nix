{
  description = "Modelplane: a control plane for serving ML models on GPU Kubernetes fleets";

  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";
    flake-utils.url = "github:numtide/flake-utils";
  };

  outputs = { self, nixpkgs, flake-utils }:
    flake-utils.lib.eachDefaultSystem (system:
      let
        pkgs = nixpkgs.legacyPackages.${system};
        python = pkgs.python311;
        tools = [ python pkgs.uv pkgs.gnumake pkgs.nodejs pkgs.git ];
      in
      {
        # `nix develop`: the same tools `make` installs on a plain machine.
        devShells.default = pkgs.mkShell {
          packages = tools;
          env.UV_PYTHON = "${python}/bin/python3";
        };

        # `nix flake check`: runs exactly what `make test` runs. uv resolves from
        # uv.lock, so the check needs network access to PyPI (a sandbox-relaxed
        # builder, or `nix build --option sandbox relaxed`).
        checks.test = pkgs.stdenv.mkDerivation {
          name = "modelplane-test";
          src = self;
          nativeBuildInputs = tools;
          __noChroot = true;
          buildPhase = ''
            export HOME=$TMPDIR UV_PYTHON=${python}/bin/python3 UV=${pkgs.uv}/bin/uv
            make test
          '';
          installPhase = "touch $out";
        };
      });
}
