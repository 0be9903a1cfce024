// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ERC721Burnable} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721Burnable.sol";

/// OpenZeppelin ERC-721 with open minting and owner burns (the seaport-js TestERC721 cannot burn).
contract DemoERC721 is ERC721, ERC721Burnable {
    constructor() ERC721("Chainmail Demo 721", "CM721") {}

    function mint(address to, uint256 tokenId) external {
        _mint(to, tokenId);
    }
}
